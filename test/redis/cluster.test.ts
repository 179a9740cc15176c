/**
 * The Redis service against a real 3-master Redis Cluster: commands and scripts on keys in
 * different slots, NOSCRIPT recovery on every master, and a task's enqueue → dequeue → complete.
 */
import "../support/allLua.js"
import { Effect, Layer } from "effect"
import { Cluster } from "ioredis"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { type LuaName, luaScript } from "../../src/redis/scripts.js"
import { complete, dequeueLease, enqueue, forward, recover } from "../../src/steps/index.js"
import { TestClock } from "effect/testing"
import { allQueues, queueKeys } from "../../src/wire/keys.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"

let cluster: RedisClusterHandle
/** Three queues whose keys sit in three slots owned by three different masters. */
let queues: ReadonlyArray<string>

beforeAll(async () => {
  cluster = await startRedisCluster()
  const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
  try {
    await c.call("PING")
    const byOwner = new Map<string, string>()
    for (let i = 0; byOwner.size < 3 && i < 1000; i++) {
      const { owner } = await masterOf(c, queueKeys(`q${i}`).paused)
      if (owner !== undefined && !byOwner.has(owner)) byOwner.set(owner, `q${i}`)
    }
    queues = [...byOwner.values()]
  } finally {
    c.disconnect()
  }
}, 60_000)
afterAll(() => cluster?.stop())

beforeEach(async () => {
  const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
  try {
    for (const q of queues) await c.del(queueKeys(q).paused)
  } finally {
    c.disconnect()
  }
})

const layer = () => Redis.layer({ cluster: cluster.nodes })
const run = <A, E>(eff: Effect.Effect<A, E, Redis>) =>
  Effect.runPromise(eff.pipe(Effect.provide(layer())) as Effect.Effect<A, unknown>)

const masterOf = (c: Cluster, key: string) =>
  c.call("CLUSTER", "KEYSLOT", key).then((slot) => {
    const s = Number(slot)
    const owner = (c.slots[s] ?? [])[0]
    return { slot: s, owner }
  })

describe("Redis service on a 3-master Redis Cluster", () => {
  it("connects as a cluster client and runs commands on keys in different slots and on different masters", async () => {
    const placed = await run(
      Effect.gen(function* () {
        const r = yield* Redis
        expect(r.isCluster).toBe(true)
        expect(r.target).toBe(`cluster ${cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",")}`)
        for (const q of queues) yield* r.use("set", (c) => c.set(queueKeys(q).paused, q))
        expect(queues).toHaveLength(3)
        const values = yield* Effect.forEach(queues, (q) => r.use("get", (c) => c.get(queueKeys(q).paused)))
        expect(values).toEqual(queues)
        const c = r.client as Cluster
        return yield* Effect.promise(() => Promise.all(queues.map((q) => masterOf(c, queueKeys(q).paused))))
      })
    )
    expect(new Set(placed.map((p) => p.slot)).size).toBe(3)
    expect(new Set(placed.map((p) => p.owner)).size).toBe(3)
  })

  it("runs a script on each slot, and a pipelined script batch within one slot, in order", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* Redis
        const first = yield* Effect.forEach(queues, (q) => r.script("pauseQueue", [queueKeys(q).paused], [1700000000]))
        const again = yield* Effect.forEach(queues, (q) => r.script("pauseQueue", [queueKeys(q).paused], [1700000001]))
        const k = queueKeys(queues[0]!).paused
        const unpaused = yield* r.script("unpauseQueue", [k], [])
        const batch = yield* r.scriptBatch([
          { script: "pauseQueue", keys: [k], args: [5] },
          { script: "pauseQueue", keys: [k], args: [6] },
          { script: "unpauseQueue", keys: [k], args: [] },
          { script: "pauseQueue", keys: [k], args: [7] }
        ])
        const stored = yield* r.use("get", (c) => c.get(k))
        return { first, again, unpaused, batch, stored }
      })
    )
    expect(out.first).toEqual([1, 1, 1])
    expect(out.again).toEqual([0, 0, 0])
    expect(out.unpaused).toBe(1)
    expect(out.batch).toEqual([1, 0, 1, 1].map((value) => ({ ok: true, value })))
    expect(out.stored).toBe("7")
  })

  it("reloads scripts on every master after SCRIPT FLUSH, for `script` and for `scriptBatch`", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* Redis
        const c = r.client as Cluster
        const masters = c.nodes("master")
        const flush = Effect.promise(() => Promise.all(masters.map((n) => n.script("FLUSH"))))
        const loaded = (name: LuaName) =>
          Effect.promise(() =>
            Promise.all(masters.map((n) => n.script("EXISTS", luaScript(name).sha) as Promise<Array<number>>))
          )
        yield* flush
        const viaScript = yield* Effect.forEach(queues, (q) => r.script("pauseQueue", [queueKeys(q).paused], [1]))
        yield* flush
        const viaBatch = yield* Effect.forEach(queues, (q) =>
          r.scriptBatch([
            { script: "unpauseQueue", keys: [queueKeys(q).paused], args: [] },
            { script: "unpauseQueue", keys: [queueKeys(q).paused], args: [] }
          ])
        )
        return { viaScript, viaBatch, unpauseLoaded: yield* loaded("unpauseQueue") }
      })
    )
    expect(out.viaScript).toEqual([1, 1, 1])
    for (const b of out.viaBatch)
      expect(b).toEqual([
        { ok: true, value: 1 },
        { ok: true, value: 0 }
      ])
    // scriptBatch loads a missing script on every master, so other slots find it too.
    expect(out.unpauseLoaded).toEqual([[1], [1], [1]])
  })

  it("sends a batch whose keys span slots as one pipeline per slot, every call its own reply, in call order", async () => {
    const [a, b, c] = queues as [string, string, string]
    const paused = (q: string) => queueKeys(q).paused
    const calls = [
      { script: "pauseQueue" as const, keys: [paused(a)], args: [1] },
      { script: "pauseQueue" as const, keys: [paused(b)], args: [1] },
      { script: "pauseQueue" as const, keys: [paused(a)], args: [1] },
      { script: "unpauseQueue" as const, keys: [paused(c)], args: [] },
      { script: "unpauseQueue" as const, keys: [paused(b)], args: [] },
      { script: "pauseQueue" as const, keys: [paused(c)], args: [1] },
      { script: "unpauseQueue" as const, keys: [paused(a)], args: [] },
      { script: "unpauseQueue" as const, keys: [paused(a)], args: [] }
    ]
    const replies = await run(Effect.flatMap(Redis, (r) => r.scriptBatch(calls)))
    // pause answers 1 when it paused, 0 when already paused; unpause 1 when it unpaused, 0 when not paused.
    expect(replies.map((x) => (x.ok ? x.value : x.error.message))).toEqual([1, 1, 0, 0, 1, 1, 1, 0])
  })

  it("enqueues, leases and completes tasks in two queues (different slots), registering both in asynq:queues", async () => {
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* enqueue("cluster:ping", { n: 1 }, { queue: queues[0]! })
        const b = yield* enqueue("cluster:ping", { n: 2 }, { queue: queues[1]! })
        const leased = yield* dequeueLease({ queues: queues.slice(0, 2), count: 2 })
        const done = yield* Effect.forEach(leased.tasks, (t) => complete(t.msg))
        const { redis } = yield* Broker
        const registered = yield* redis.use("smembers", (c) => c.smembers(allQueues))
        const left = yield* Effect.forEach(queues.slice(0, 2), (q) =>
          redis.use("exists", (c) => c.exists(queueKeys(q).active, queueKeys(q).pending))
        )
        return { ids: [a.id, b.id], leased: leased.tasks.map((t) => t.msg.id), done, registered, left }
      }).pipe(Effect.provide(Broker.layer.pipe(Layer.provideMerge(layer())))) as Effect.Effect<
        {
          ids: string[]
          leased: string[]
          done: ReadonlyArray<{ outcome: string }>
          registered: string[]
          left: number[]
        },
        unknown
      >
    )
    expect(out.leased.sort()).toEqual(out.ids.sort())
    expect(out.done).toEqual([{ outcome: "deleted" }, { outcome: "deleted" }])
    expect(out.registered.sort()).toEqual(queues.slice(0, 2).sort())
    expect(out.left).toEqual([0, 0])
  })

  it("forwards scheduled tasks and recovers expired leases across three slots, then completes everything (TestClock)", async () => {
    const t0 = Date.UTC(2026, 10, 22, 12, 0, 0)
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        yield* TestClock.setTime(t0)
        const ids = yield* Effect.forEach(queues, (queue, i) =>
          Effect.map(enqueue("cluster:later", { i }, { queue, processIn: 10_000, maxRetry: 3 }), (t) => t.id)
        )
        const early = yield* forward({ queues })
        yield* TestClock.adjust("11 seconds")
        const forwarded = yield* forward({ queues })
        const first = yield* dequeueLease({ queues, count: 10, leaseMs: 30_000 })
        // The worker "dies": no complete. After lease + grace the recoverer sends the tasks to retry.
        yield* TestClock.adjust("61 seconds")
        const recovered = yield* recover({ queues, retryDelayMs: () => 5_000 })
        yield* TestClock.adjust("6 seconds")
        const retried = yield* forward({ queues })
        const second = yield* dequeueLease({ queues, count: 10 })
        const done = yield* Effect.forEach(second.tasks, (t) => complete(t.msg))
        const { redis } = yield* Broker
        const left = yield* Effect.forEach(queues, (q) => {
          const k = queueKeys(q)
          return redis.use("exists", (c) => c.exists(k.pending, k.active, k.lease, k.scheduled, k.retry, k.archived))
        })
        return {
          ids,
          early: early.moved,
          forwarded: forwarded.moved,
          first: first.tasks.map((t) => t.msg.id),
          recovered,
          retried: retried.moved,
          second: second.tasks.map((t) => ({ id: t.msg.id, retried: t.msg.retried, err: t.msg.errorMsg })),
          done: done.map((d) => d.outcome),
          left
        }
      }).pipe(
        Effect.provide(Broker.layer.pipe(Layer.provideMerge(layer()))),
        Effect.provide(TestClock.layer())
      ) as Effect.Effect<
        {
          ids: string[]
          early: number
          forwarded: number
          first: string[]
          recovered: { retried: number; archived: number }
          retried: number
          second: Array<{ id: string; retried: number; err: string }>
          done: string[]
          left: number[]
        },
        unknown
      >
    )
    expect(out.early).toBe(0)
    expect(out.forwarded).toBe(3)
    expect(out.first.sort()).toEqual([...out.ids].sort())
    expect(out.recovered).toMatchObject({ retried: 3, archived: 0 })
    expect(out.retried).toBe(3)
    expect(out.second.map((t) => t.id).sort()).toEqual([...out.ids].sort())
    for (const t of out.second) expect(t).toMatchObject({ retried: 1, err: "asynq: task lease expired" })
    expect(out.done).toEqual(["deleted", "deleted", "deleted"])
    expect(out.left).toEqual([0, 0, 0])
  })
})
