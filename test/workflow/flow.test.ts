/**
 * `flow()` on the durable engine, through its Promise API (createFlowClient, runFlowWorker) on a
 * real Redis: the diamond A → (B, C, D) → E, each failure policy, a node past its timeout, a
 * cancel, DAGs refused at creation, idempotent creation by flow id, and 1,000 flows at once.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type FlowClient,
  type FlowHandlers,
  type FlowNodeContext,
  type FlowSpec,
  type FlowWorker,
  createFlowClient,
  runFlowWorker
} from "../../src/workflow/index.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

const queue = "flowtest"

/** How often each node's handler ran, by `<flow id>/<node id>`. */
const ran = new Map<string, number>()
const count = (ctx: FlowNodeContext) => {
  const key = `${ctx.flowId}/${ctx.nodeId}`
  ran.set(key, (ran.get(key) ?? 0) + 1)
}
const runsOf = (flowId: string, nodeId: string) => ran.get(`${flowId}/${nodeId}`) ?? 0

/** Gates a test opens by hand: a `gate` node's handler waits for its own. */
const gates = new Map<string, { readonly opened: Promise<void>; readonly open: () => void }>()
const gate = (key: string) => {
  let g = gates.get(key)
  if (!g) {
    let open = () => {}
    const opened = new Promise<void>((resolve) => (open = resolve))
    g = { opened, open }
    gates.set(key, g)
  }
  return g
}
const aborted = new Set<string>()

const num = (v: unknown) => (v as { n: number }).n

/** The node handlers of every worker of this file. */
const handlers: FlowHandlers = {
  value: (payload, ctx) => {
    count(ctx)
    return payload
  },
  times: (payload, ctx) => {
    count(ctx)
    return { n: num(ctx.results.A) * (payload as { k: number }).k }
  },
  collect: (_payload, ctx) => {
    count(ctx)
    return { results: ctx.results, failures: ctx.failures }
  },
  boom: async (payload, ctx) => {
    count(ctx)
    throw new Error(String(payload))
  },
  gate: async (payload, ctx) => {
    count(ctx)
    await gate(`${ctx.flowId}/${ctx.nodeId}`).opened
    return payload
  },
  hang: (_payload, ctx) => {
    count(ctx)
    return new Promise((_, reject) =>
      ctx.signal.addEventListener("abort", () => {
        aborted.add(`${ctx.flowId}/${ctx.nodeId}`)
        reject(new Error("aborted"))
      })
    )
  }
}

let worker: FlowWorker
let client: FlowClient
let c: IORedis

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  worker = await runFlowWorker(handlers, {
    redis: testRedisUrl(),
    queue,
    concurrency: 50,
    logLevel: "Error",
    engine: { server: { shutdownTimeoutMs: 500 } }
  })
  client = createFlowClient({ redis: testRedisUrl(), queue })
})

afterAll(async () => {
  await client?.close()
  await worker?.close()
  c?.disconnect()
})

const diamond = (id: string): FlowSpec => ({
  id,
  nodes: [
    { id: "A", type: "value", payload: { n: 2 } },
    { id: "B", type: "times", payload: { k: 10 }, dependsOn: ["A"] },
    { id: "C", type: "times", payload: { k: 100 }, dependsOn: ["A"] },
    { id: "D", type: "times", payload: { k: 1000 }, dependsOn: ["A"] },
    { id: "E", type: "collect", dependsOn: ["B", "C", "D"] }
  ]
})

describe("the diamond A → (B, C, D) → E", () => {
  it("E gets B, C and D's results, each computed from A's; A runs once; status shows every node", async () => {
    const handle = await client.flow(diamond("diamond"))
    expect(handle.id).toBe("diamond")
    const result = await handle.result({ timeoutMs: 20_000 })
    expect(result.nodes.E).toEqual({
      status: "succeeded",
      result: { results: { B: { n: 20 }, C: { n: 200 }, D: { n: 2000 } }, failures: {} }
    })
    expect(result.nodes.A).toEqual({ status: "succeeded", result: { n: 2 } })
    expect(["A", "B", "C", "D", "E"].map((n) => runsOf("diamond", n))).toEqual([1, 1, 1, 1, 1])
    const status = await handle.status()
    expect(status.state).toBe("succeeded")
    expect(status.failure).toBeUndefined()
    expect(Object.keys(status.nodes)).toEqual(["A", "B", "C", "D", "E"])
    expect(status.nodes.D).toEqual({ status: "succeeded", result: { n: 2000 } })
    // A handle by id, from another client, sees the same recorded result (nothing runs again).
    expect(await worker.get("diamond").result()).toEqual(result)
    expect(runsOf("diamond", "A")).toBe(1)
    // Its runs are asynq tasks on a registered control queue (seen by the CLI and asynqmon).
    expect(await c.sismember("asynq:queues", "flowtest:effect-asynq:flow")).toBe(1)
  })
})

describe("failure policies", () => {
  it("fail: the flow fails with the node's error; the node running finishes, the nodes not started never start", async () => {
    const handle = await client.flow({
      id: "policy-fail",
      nodes: [
        { id: "A", type: "value", payload: { n: 1 } },
        { id: "B", type: "boom", payload: "card declined", dependsOn: ["A"] },
        { id: "S", type: "gate", payload: "slow done", dependsOn: ["A"] },
        { id: "C", type: "value", dependsOn: ["B"] },
        { id: "X", type: "value", dependsOn: ["S"] }
      ]
    })
    // B has failed while S still runs; then S is let go.
    await waitFor(
      "B failed while S runs",
      () => handle.status(),
      (s) => s.nodes.B?.status === "failed" && runsOf("policy-fail", "S") === 1
    )
    gate("policy-fail/S").open()
    const failed = await handle.result({ timeoutMs: 20_000 }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(failed).toMatchObject({
      _tag: "FlowFailed",
      flowId: "policy-fail",
      node: "B",
      error: { name: "Error", message: "card declined" }
    })
    expect((failed as { message: string }).message).toContain('node "B" failed: Error: card declined')
    expect((failed as { nodes: unknown }).nodes).toEqual({
      A: { status: "succeeded", result: { n: 1 } },
      B: { status: "failed", error: { name: "Error", message: "card declined" } },
      S: { status: "succeeded", result: "slow done" }
    })
    expect(runsOf("policy-fail", "C")).toBe(0)
    expect(runsOf("policy-fail", "X")).toBe(0)
    const status = await handle.status()
    expect(status.state).toBe("failed")
    expect(status.failure).toEqual({ node: "B", error: { name: "Error", message: "card declined" } })
    expect(status.nodes.C).toEqual({ status: "waiting" })
    expect(status.nodes.X).toEqual({ status: "waiting" })
    expect(status.nodes.S).toEqual({ status: "succeeded", result: "slow done" })
  })

  it("ignore: the dependents run without the failed node's result, and the flow succeeds", async () => {
    const result = await (
      await client.flow({
        id: "policy-ignore",
        nodes: [
          { id: "A", type: "value", payload: { n: 1 } },
          { id: "B", type: "boom", payload: "optional step down", onFailure: "ignore" },
          { id: "C", type: "collect", dependsOn: ["A", "B"] }
        ]
      })
    ).result({ timeoutMs: 20_000 })
    expect(result.nodes.C).toEqual({ status: "succeeded", result: { results: { A: { n: 1 } }, failures: {} } })
    expect(result.nodes.B).toEqual({ status: "failed", error: { name: "Error", message: "optional step down" } })
  })

  it("continue: the dependents run and see the failure, and the flow succeeds", async () => {
    const result = await (
      await client.flow({
        id: "policy-continue",
        nodes: [
          { id: "A", type: "value", payload: { n: 1 } },
          { id: "B", type: "boom", payload: "flaky upstream", onFailure: "continue" },
          { id: "C", type: "collect", dependsOn: ["A", "B"] }
        ]
      })
    ).result({ timeoutMs: 20_000 })
    expect(result.nodes.C).toEqual({
      status: "succeeded",
      result: { results: { A: { n: 1 } }, failures: { B: { name: "Error", message: "flaky upstream" } } }
    })
  })

  it("a handler that never settles fails its node at its timeout (its signal aborted); a type with no handler fails with NoHandler", async () => {
    const result = await (
      await client.flow({
        id: "timeout",
        nodes: [
          { id: "H", type: "hang", timeoutMs: 50, onFailure: "continue" },
          { id: "N", type: "no-such-type", onFailure: "continue" },
          { id: "C", type: "collect", dependsOn: ["H", "N"] }
        ]
      })
    ).result({ timeoutMs: 20_000 })
    expect(result.nodes.H).toEqual({
      status: "failed",
      error: { name: "NodeTimeout", message: 'node "H" ran longer than its timeout of 50 ms' }
    })
    expect(result.nodes.N).toMatchObject({ status: "failed", error: { name: "NoHandler" } })
    expect(aborted.has("timeout/H")).toBe(true)
    expect(result.nodes.C).toMatchObject({
      status: "succeeded",
      result: { results: {}, failures: { H: { name: "NodeTimeout" }, N: { name: "NoHandler" } } }
    })
  })
})

describe("cancel", () => {
  it("a cancelled flow starts no more nodes and ends cancelled", async () => {
    const handle = await client.flow({
      id: "cancelled",
      nodes: [
        { id: "A", type: "gate", payload: 1 },
        { id: "B", type: "value", dependsOn: ["A"] }
      ]
    })
    await waitFor(
      "A running",
      () => runsOf("cancelled", "A"),
      (n) => n === 1
    )
    // Cancelled from the worker's own process: the run there knows at once (from another process
    // the notice goes through pub/sub, and A's successor could start before it lands).
    await worker.get("cancelled").cancel()
    gate("cancelled/A").open()
    const failed = await handle.result({ timeoutMs: 20_000 }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(failed).toMatchObject({ _tag: "FlowFailed", node: undefined, error: { name: "Cancelled" } })
    expect(runsOf("cancelled", "B")).toBe(0)
    const status = await handle.status()
    expect(status.state).toBe("cancelled")
    expect(status.nodes).toEqual({ A: { status: "succeeded", result: 1 }, B: { status: "waiting" } })
  })
})

describe("creation", () => {
  const refused = (spec: FlowSpec) =>
    client.flow(spec).then(
      () => undefined,
      (e: unknown) => e as { _tag: string; reason: string; node?: string; message: string }
    )

  it("a cycle is refused with the nodes on it, and nothing is written", async () => {
    const e = await refused({
      id: "cyclic",
      nodes: [
        { id: "A", type: "value" },
        { id: "B", type: "value", dependsOn: ["A", "D"] },
        { id: "C", type: "value", dependsOn: ["B"] },
        { id: "D", type: "value", dependsOn: ["C"] }
      ]
    })
    expect(e).toMatchObject({ _tag: "InvalidFlow", reason: "cycle" })
    expect(e?.message).toBe(
      'flow: the nodes depend on each other in a cycle: "B" → "D" → "C" → "B" (each depends on the next)'
    )
    expect(e?.node).toBe("B")
    expect(await refused({ id: "self", nodes: [{ id: "A", type: "value", dependsOn: ["A"] }] })).toMatchObject({
      reason: "cycle",
      node: "A"
    })
    expect(
      await client
        .get("cyclic")
        .status()
        .catch((x: unknown) => x)
    ).toMatchObject({ _tag: "FlowNotFound", flowId: "cyclic" })
  })

  it("an unknown dependency, a duplicate id, no nodes, a bad policy, timeout or payload are refused, each by name", async () => {
    expect(await refused({ nodes: [{ id: "A", type: "value", dependsOn: ["Z"] }] })).toMatchObject({
      reason: "unknown-dependency",
      node: "A",
      message: 'flow: node "A" depends on "Z", which is not a node of this flow'
    })
    expect(
      await refused({
        nodes: [
          { id: "A", type: "value" },
          { id: "A", type: "value" }
        ]
      })
    ).toMatchObject({ reason: "duplicate-id", node: "A" })
    expect(await refused({ nodes: [] })).toMatchObject({ reason: "empty" })
    expect(await refused({ nodes: [{ id: "A", type: "value", onFailure: "retry" as "fail" }] })).toMatchObject({
      reason: "bad-policy",
      node: "A"
    })
    expect(await refused({ nodes: [{ id: "A", type: "value", timeoutMs: 0 }] })).toMatchObject({
      reason: "bad-timeout"
    })
    expect(await refused({ nodes: [{ id: "A", type: "value", payload: { big: 1n } }] })).toMatchObject({
      reason: "bad-payload"
    })
    expect(await refused({ nodes: [{ id: "", type: "value" }] })).toMatchObject({ reason: "bad-node" })
    expect(await refused({ id: "", nodes: [{ id: "A", type: "value" }] })).toMatchObject({ reason: "bad-id" })
  })

  it("the same flow id is the same flow: a second start runs nothing, whatever nodes it names", async () => {
    const first = await client.flow({ id: "same", nodes: [{ id: "A", type: "value", payload: "first" }] })
    const second = await client.flow({
      id: "same",
      nodes: [
        { id: "A", type: "value", payload: "second" },
        { id: "B", type: "value" }
      ]
    })
    expect(second.id).toBe(first.id)
    const [a, b] = await Promise.all([first.result(), second.result()])
    expect(a).toEqual({ nodes: { A: { status: "succeeded", result: "first" } } })
    expect(b).toEqual(a)
    // Started again after it completed: still the same flow, nothing runs.
    await client.flow({ id: "same", nodes: [{ id: "A", type: "value", payload: "third" }] })
    expect(await client.get("same").result()).toEqual(a)
    expect(runsOf("same", "A")).toBe(1)
    expect(runsOf("same", "B")).toBe(0)
  })

  it("a flow id never started: result and status reject with FlowNotFound at once", async () => {
    await expect(client.get("never").result()).rejects.toMatchObject({ _tag: "FlowNotFound", flowId: "never" })
    await expect(client.get("never").status()).rejects.toMatchObject({ _tag: "FlowNotFound" })
  })
})

describe("scale", () => {
  it("1,000 diamonds started at once all complete, each with its own result", async () => {
    const n = 1000
    const started = performance.now()
    const handles = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client.flow({
          ...diamond(`many-${i}`),
          nodes: diamond("").nodes.map((x) => (x.id === "A" ? { ...x, payload: { n: i } } : x))
        })
      )
    )
    const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 110_000 })))
    const seconds = (performance.now() - started) / 1000
    // Reported, not asserted (speed goes in bench/).
    console.log(`flow scale: ${n} diamonds (5 nodes each) started and completed in ${seconds.toFixed(1)} s`)
    results.forEach((r, i) =>
      expect(r.nodes.E).toEqual({
        status: "succeeded",
        result: { results: { B: { n: i * 10 }, C: { n: i * 100 }, D: { n: i * 1000 } }, failures: {} }
      })
    )
    expect(Array.from({ length: n }, (_, i) => runsOf(`many-${i}`, "A")).every((r) => r === 1)).toBe(true)
  }, 120_000)
})

describe("durability", () => {
  it("a flow outlives its worker: another worker finishes it, and the nodes recorded before do not run again", async () => {
    const options = {
      redis: testRedisUrl(),
      queue: "flowcrash",
      logLevel: "Error",
      engine: { server: { shutdownTimeoutMs: 200 } }
    } as const
    const first = await runFlowWorker(handlers, options)
    let second: FlowWorker | undefined
    try {
      await first.flow({
        id: "outlives",
        nodes: [
          { id: "A", type: "value", payload: { n: 3 } },
          { id: "B", type: "gate", payload: "b", dependsOn: ["A"] },
          { id: "C", type: "collect", dependsOn: ["B"] }
        ]
      })
      // The first worker goes away while B runs (its handler never settles there).
      await waitFor(
        "B running on the first worker",
        () => runsOf("outlives", "B"),
        (n) => n === 1
      )
      await first.close()
      gate("outlives/B").open()
      second = await runFlowWorker(handlers, options)
      const result = await second.get("outlives").result({ timeoutMs: 20_000 })
      expect(result.nodes.C).toEqual({ status: "succeeded", result: { results: { B: "b" }, failures: {} } })
      expect([runsOf("outlives", "A"), runsOf("outlives", "B"), runsOf("outlives", "C")]).toEqual([1, 2, 1])
    } finally {
      await first.close()
      await second?.close()
    }
  })
})
