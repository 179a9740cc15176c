/**
 * The inspector's workflow view on a real 3-master Redis Cluster: SCAN and ZSCAN go to the node
 * that serves each control queue's slot (a SCAN sent to another node would miss its keys), so the
 * listing finds every execution of every shard and inspect finds each execution's clock.
 */
import { Effect, Layer, Schedule, Schema } from "effect"
import { DurableClock, Workflow, type WorkflowEngine } from "effect/workflow"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import {
  getWorkflowExecution,
  listWorkflowExecutions,
  type WorkflowExecutionSummary
} from "../../src/inspector/index.js"
import { Redis } from "../../src/redis/Redis.js"
import { keySlot } from "../../src/redis/keySlot.js"
import { queueKeys } from "../../src/wire/keys.js"
import { layer } from "../../src/workflow/index.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"
import { runProgram } from "../workflow/support.js"

let cluster: RedisClusterHandle
beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)
afterAll(() => cluster?.stop())

describe("workflow executions on a Redis Cluster", { timeout: 60_000 }, () => {
  const Nap = Workflow.make("Wf.Nap", {
    payload: { n: Schema.Number },
    success: Schema.Number,
    idempotencyKey: ({ n }) => String(n)
  })

  it("lists every execution of 6 shards spread over the nodes, and inspect shows each one's scheduled clock", async () => {
    const brokerLayer = Broker.layer.pipe(
      Layer.provide(Redis.layer({ cluster: cluster.nodes.map((n) => ({ host: n.host, port: n.port })) }))
    )
    const engine = layer({ queue: "naps", shards: 6, server: { shutdownTimeoutMs: 500 } }).pipe(
      Layer.provide(brokerLayer)
    ) as Layer.Layer<WorkflowEngine.WorkflowEngine>
    const onCluster = <A, E>(eff: Effect.Effect<A, E, Broker>) => Effect.orDie(Effect.provide(eff, brokerLayer))
    const exit = await runProgram(
      engine,
      Nap.toLayer(({ n }) => Effect.as(DurableClock.sleep({ name: `nap-${n}`, duration: "1 hour" }), n)),
      Effect.gen(function* () {
        const ids = yield* Effect.forEach(
          Array.from({ length: 24 }, (_, n) => n),
          (n) => Nap.execute({ n }, { discard: true })
        )
        const details = yield* Effect.forEach(ids, (id) =>
          onCluster(getWorkflowExecution("Wf.Nap", id, { queue: "naps" })).pipe(
            Effect.repeat({
              schedule: Schedule.spaced("20 millis"),
              until: (x) => x.state === "suspended" && x.clocks.length === 1
            }),
            Effect.timeout("15 seconds")
          )
        )
        const seen: Array<WorkflowExecutionSummary> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const page = yield* onCluster(listWorkflowExecutions("Wf.Nap", { queue: "naps", pageSize: 5, cursor }))
          seen.push(...page.executions)
          cursor = page.cursor
          pages++
        } while (cursor !== "" && pages < 100)
        return { ids, details, seen }
      })
    )
    expect(exit._tag).toBe("Success")
    if (exit._tag !== "Success") return
    const { ids, details, seen } = exit.value
    expect(new Set(seen.map((e) => e.executionId))).toEqual(new Set(ids))
    expect(seen.every((e) => e.state === "suspended")).toBe(true)
    expect(details.map((d) => d.clocks.map((c) => [c.name, c.status]))).toEqual(
      ids.map((_, n) => [[`nap-${n}`, "scheduled"]])
    )
    // The shards used are served by more than one node (so routing SCAN to the slot's node matters).
    const thirds = new Set(
      seen.map((e) => Math.min(2, Math.floor(keySlot(queueKeys(e.queue).pending) / Math.floor(16384 / 3))))
    )
    expect(thirds.size).toBeGreaterThan(1)
  })
})
