/**
 * effect-asynq/edge in Cloudflare's workerd (through miniflare), bundled as wrangler bundles a
 * Worker (esbuild, platform neutral, workerd conditions), against the loopback REST gateway in
 * front of this file's redis-server database:
 * - the enqueue-only worker: its size, and the bytes it writes equal the TCP client's;
 * - examples/cloudflare-workers: `fetch` enqueues a task that a long-lived Node worker (a real
 *   Server) processes; `scheduled` forwards a due scheduled task and recovers an expired lease.
 */
import { readFileSync } from "node:fs"
import type { Redis as IORedis } from "ioredis"
import { Miniflare } from "miniflare"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createClient as createTcpClient } from "../../src/client.js"
import { scheduler_claimLua } from "../../src/redis/lua.generated.js"
import { withPrelude } from "../../src/redis/restProtocol.js"
import { sha1Hex } from "../../src/hash/sha1.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startServer } from "../processor/support.js"
import { makeMsg, putActive, putInZset, zsetOf } from "../support/arrange.js"
import { bundleEdge, type EdgeBundle } from "../support/edgeBundle.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { type RestGateway, startRestGateway } from "../support/restGateway.js"
import { waitFor } from "../support/waitFor.js"
import { parityCases, taskSnapshot } from "./parity.js"

/** The size budget of an edge bundle (issue 15): minified, platform neutral. Enqueue-only and with the maintenance tick alike. */
const edgeBundleBudget = 150 * 1024

/**
 * Files of the "effect" barrel: importing `{ Effect } from "effect"` makes the bundler keep whole
 * namespace objects (every export of Effect, Random's ISAAC generator, …: about 45 KB minified),
 * so the edge import graph uses deep imports (`import * as Effect from "effect/Effect"`).
 */
const effectBarrel = (bundle: EdgeBundle) =>
  bundle.scanned.filter((f) => /node_modules\/effect\/dist\/index\.js$/.test(f))

let gateway: RestGateway
let raw: IORedis
let enqueueWorker: EdgeBundle
let exampleWorker: EdgeBundle

const wranglerSetting = (name: string): string => {
  const m = new RegExp(`^${name}\\s*=\\s*"([^"]+)"`, "m").exec(
    readFileSync(new URL("../../examples/cloudflare-workers/wrangler.toml", import.meta.url), "utf8")
  )
  if (!m) throw new Error(`wrangler.toml has no ${name}`)
  return m[1]!
}

/** A Worker's scheduled handler, triggered through miniflare (its Fetcher type leaves `scheduled` out). */
const scheduled = async (mf: Miniflare): Promise<{ readonly outcome: string }> => {
  const worker = (await mf.getWorker()) as unknown as {
    scheduled(options: { cron: string }): Promise<{ outcome: string }>
  }
  return worker.scheduled({ cron: "* * * * *" })
}

const miniflare = (bundle: EdgeBundle, bindings: Record<string, string>) =>
  new Miniflare({
    modules: true,
    script: bundle.code,
    compatibilityDate: wranglerSetting("compatibility_date"),
    bindings
  })

beforeAll(async () => {
  gateway = await startRestGateway(testRedisUrl())
  raw = rawClient()
  enqueueWorker = await bundleEdge("test/edge/fixtures/enqueueWorker.ts", { runtime: "workerd" })
  exampleWorker = await bundleEdge(`examples/cloudflare-workers/${wranglerSetting("main")}`, { runtime: "workerd" })
})
afterAll(async () => {
  await gateway?.close()
  raw?.disconnect()
})
beforeEach(() => flushTestDb())

describe("the enqueue-only worker", () => {
  it(`bundles platform-neutral within ${edgeBundleBudget / 1024} KB, without ioredis, Node built-ins, effect's Schema or the effect barrel`, () => {
    expect(enqueueWorker.bytes).toBeLessThanOrEqual(edgeBundleBudget)
    expect(effectBarrel(enqueueWorker)).toEqual([])
    expect(Object.keys(enqueueWorker.inputs).filter((f) => /Schema/.test(f))).toEqual([])
    // Nothing of ioredis or Node anywhere in the import graph, not even tree-shaken away.
    expect(enqueueWorker.scanned.filter((f) => /ioredis|node:|node_modules\/@types\/node/.test(f))).toEqual([])
    expect(enqueueWorker.scanned).toContain("src/redis/httpRedis.ts")
    // Only the scripts the client runs are carried.
    expect(enqueueWorker.code).toContain("-- enqueue:")
    expect(enqueueWorker.code).not.toContain("-- forward:")
  })

  it("writes in workerd the same bytes as the TCP client, for every case", async () => {
    const mf = miniflare(enqueueWorker, { REST_URL: gateway.url, REST_TOKEN: gateway.token })
    try {
      for (const { name, payload, options } of parityCases) {
        await flushTestDb()
        const queue = (options.queue as string | undefined) ?? "default"
        const tcp = createTcpClient({ url: testRedisUrl() })
        await tcp.enqueue("parity:task", payload, { ...options, taskId: "same-id" }).finally(() => tcp.close())
        const viaTcp = await taskSnapshot(raw, queue, "same-id")
        await flushTestDb()
        const body =
          payload instanceof Uint8Array
            ? {
                type: "parity:task",
                payloadBase64: Buffer.from(payload).toString("base64"),
                options: { ...options, taskId: "same-id" }
              }
            : { type: "parity:task", payload, options: { ...options, taskId: "same-id" } }
        const res = await mf.dispatchFetch("http://worker/", { method: "POST", body: JSON.stringify(body) })
        expect({ name, status: res.status }).toEqual({ name, status: 200 })
        expect(await res.json()).toMatchObject({ id: "same-id", queue })
        expect({ name, state: await taskSnapshot(raw, queue, "same-id") }).toEqual({ name, state: viaTcp })
      }
    } finally {
      await mf.dispose()
    }
  })

  it("answers a typed error from workerd: InvalidArgument for a bad option, DuplicateTask for a held lock", async () => {
    const mf = miniflare(enqueueWorker, { REST_URL: gateway.url, REST_TOKEN: gateway.token })
    try {
      const post = async (body: unknown) =>
        (await mf.dispatchFetch("http://worker/", { method: "POST", body: JSON.stringify(body) })).json()
      expect(await post({ type: "t", options: { maxRetry: 1.5 } })).toMatchObject({
        error: { _tag: "InvalidArgument" }
      })
      expect(await post({ type: "t", payload: 1, options: { unique: 60_000 } })).toMatchObject({
        id: expect.any(String)
      })
      expect(await post({ type: "t", payload: 1, options: { unique: 60_000 } })).toMatchObject({
        error: { _tag: "DuplicateTask" }
      })
    } finally {
      await mf.dispose()
    }
  })
})

describe("examples/cloudflare-workers in workerd", () => {
  const bindings = () => ({ UPSTASH_REDIS_REST_URL: gateway.url, UPSTASH_REDIS_REST_TOKEN: gateway.token })

  it(`bundles with its maintenance tick platform-neutral within ${edgeBundleBudget / 1024} KB, without the effect barrel`, () => {
    expect(exampleWorker.bytes).toBeLessThanOrEqual(edgeBundleBudget)
    expect(effectBarrel(exampleWorker)).toEqual([])
    expect(exampleWorker.scanned.filter((f) => /ioredis|node:|node_modules\/@types\/node/.test(f))).toEqual([])
    // The tick's scripts are carried (forward: Lua source in the bundle).
    expect(exampleWorker.code).toContain("-- forward:")
  })

  it("fetch enqueues (a second signup is a 409 while the first is queued, bad input a 400); the long-lived Node worker processes the task", async () => {
    const mf = miniflare(exampleWorker, bindings())
    const signup = (email: string) =>
      mf.dispatchFetch("http://worker/signup", { method: "POST", body: JSON.stringify({ email }) })
    const seen: Array<{ id: string; payload: string }> = []
    let server: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      const res = await signup("ada@example.com")
      expect(res.status).toBe(202)
      const { taskId } = (await res.json()) as { taskId: string }
      expect((await signup("ada@example.com")).status).toBe(409)
      expect((await signup("nope")).status).toBe(400)
      server = await startServer(
        {
          "email:welcome": async (task) => {
            seen.push({ id: task.id, payload: new TextDecoder().decode(task.payload) })
          }
        },
        { queues: { email: 1 } },
        { url: testRedisUrl() }
      )
      await waitFor(
        "the Node worker to process the task",
        () => seen,
        (s) => s.length > 0
      )
      expect(seen).toEqual([{ id: taskId, payload: JSON.stringify({ email: "ada@example.com" }) }])
    } finally {
      await mf.dispose()
      await server?.shutdown()
    }
  })

  it("scheduled forwards a due scheduled task and recovers an expired lease", async () => {
    const nowSec = Math.floor(Date.now() / 1000)
    await putInZset(raw, makeMsg("email", "due"), "scheduled", nowSec - 5)
    await putInZset(raw, makeMsg("email", "not-yet"), "scheduled", nowSec + 3600)
    await putActive(raw, makeMsg("default", "stalled", { retry: 0 }), nowSec - 120)
    await putActive(raw, makeMsg("default", "leased"), nowSec + 60)
    const mf = miniflare(exampleWorker, bindings())
    try {
      expect((await scheduled(mf)).outcome).toBe("ok")
    } finally {
      await mf.dispose()
    }
    const email = queueKeys("email")
    const deflt = queueKeys("default")
    expect(await raw.lrange(email.pending, 0, -1)).toEqual(["due"])
    expect((await zsetOf(raw, email.scheduled)).map(([m]) => m)).toEqual(["not-yet"])
    // No retries left: archived with asynq's lease-expired error.
    expect((await zsetOf(raw, deflt.archived)).map(([m]) => m)).toEqual(["stalled"])
    expect(decodeTaskMessage(new Uint8Array((await raw.hgetBuffer(deflt.task("stalled"), "msg"))!))).toMatchObject({
      errorMsg: "asynq: task lease expired"
    })
    expect((await zsetOf(raw, deflt.lease)).map(([m]) => m)).toEqual(["leased"])
  })

  it("scheduled fails the invocation when the tick could not reach Redis", async () => {
    const mf = miniflare(exampleWorker, { ...bindings(), UPSTASH_REDIS_REST_TOKEN: "wrong" })
    try {
      const result = await scheduled(mf).catch((e: unknown) => ({ outcome: `threw ${String(e)}` }))
      expect(result.outcome).not.toBe("ok")
    } finally {
      await mf.dispose()
    }
  })
})

describe("effect-asynq/edge/scheduler in workerd", () => {
  it("the scheduler tick inside the maintenance tick enqueues a due occurrence once, however many ticks overlap", async () => {
    const bundle = await bundleEdge("test/edge/fixtures/schedulerWorker.ts", {
      runtime: "workerd",
      resolveBrowserField: true
    })
    const mf = miniflare(bundle, { REST_URL: gateway.url, REST_TOKEN: gateway.token })
    // The three ticks overlap for sure: each has read the entry's record (the occurrence is due)
    // before any of them claims it (the gateway holds the claim calls until all three have come).
    const claimSource = withPrelude(scheduler_claimLua)
    const claimSha = sha1Hex(claimSource)
    gateway.gather((c) => (c[0] === "EVAL" && c[1] === claimSource) || (c[0] === "EVALSHA" && c[1] === claimSha), 3)
    try {
      const summaries = await Promise.all([1, 2, 3].map(async () => (await mf.dispatchFetch("http://worker/")).json()))
      expect(summaries.flatMap((s) => (s as { errors: Array<unknown> }).errors)).toEqual([])
      const extras = summaries.map(
        (s) => (s as { extra: { enqueued: Array<{ taskId: string }>; alreadyDone: number } }).extra
      )
      expect(extras.flatMap((e) => e.enqueued)).toHaveLength(1)
      expect(extras.reduce((n, e) => n + e.alreadyDone, 0)).toBe(2)
      const [{ taskId }] = extras.flatMap((e) => e.enqueued)
      expect(await raw.lrange(queueKeys("reports").pending, 0, -1)).toEqual([taskId])
      expect(
        decodeTaskMessage(new Uint8Array((await raw.hgetBuffer(queueKeys("reports").task(taskId!), "msg"))!))
      ).toMatchObject({ type: "hourly:report", queue: "reports" })
      // published for asynq's tools under the derived scheduler id
      expect(await raw.zcard("asynq:schedulers")).toBe(1)
      expect((await scheduled(mf)).outcome).toBe("ok")
      expect(await raw.llen(queueKeys("reports").pending)).toBe(1)
    } finally {
      await mf.dispose()
    }
  })
})
