/**
 * Worker-side lost replies: the connection drops after Redis ran a lease transition (complete,
 * retry, archive) or a dequeue, before its reply reached the worker; ioredis reconnects and sends
 * the same EVALSHA again. A transition's resend must be recognised as done (not LeaseLost) without
 * writing or counting anything twice; a dequeue's first run must not leave tasks leased to nobody.
 * (test/support/replyDropProxy.ts sits between the worker and the real Redis and loses the reply.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { complete, completeMany } from "../../src/steps/complete.js"
import { retry } from "../../src/steps/retry.js"
import { archive } from "../../src/steps/archive.js"
import { requeue } from "../../src/steps/requeue.js"
import { dequeueLease, dequeueLeaseCall } from "../../src/steps/dequeueLease.js"
import { Broker } from "../../src/broker/Broker.js"
import { type LuaName, luaScript } from "../../src/redis/scripts.js"
import { queueKeys } from "../../src/wire/keys.js"
import { brokerLayerAt, makeMsg, putActive, putPending } from "../support/arrange.js"
import { scriptCallOf, type ReplyDropProxy, startReplyDropProxy } from "../support/replyDropProxy.js"
import { baseRedisUrl, flushTestDb, rawClient, testDb } from "../support/redis.js"

const c = rawClient()
let proxy: ReplyDropProxy

const scripts: ReadonlyArray<LuaName> = [
  "complete",
  "completeBatch",
  "retry",
  "archive",
  "requeue",
  "dequeueLease",
  "releaseLeases"
]

beforeAll(async () => {
  await flushTestDb()
  // Loaded up front, so each lossy call is a single EVALSHA (no NOSCRIPT round first).
  for (const s of scripts) await c.script("LOAD", luaScript(s).source)
  const u = new URL(baseRedisUrl())
  proxy = await startReplyDropProxy({ host: u.hostname, port: Number(u.port || 6379) })
})
afterAll(async () => {
  await proxy.close()
  c.disconnect()
})

/** Runs `eff` with a Broker connected through the proxy, losing the reply of the first EVALSHA of `script`. */
const losingReplyOf = <A, E>(
  script: LuaName,
  eff: Effect.Effect<A, E, any>
): Promise<{ value: A; dropped: number }> => {
  const before = proxy.dropped()
  return Effect.runPromise(
    Effect.gen(function* () {
      const dropped = proxy.dropReplyOf(scriptCallOf(script))
      const value = yield* eff
      yield* Effect.promise(() => dropped)
      return { value, dropped: proxy.dropped() - before }
    }).pipe(Effect.provide(brokerLayerAt({ url: `redis://127.0.0.1:${proxy.port}/${testDb()}` }))) as Effect.Effect<
      { value: A; dropped: number },
      unknown
    >
  )
}

/** Runs `eff` with a Broker connected through the proxy, nothing lost. */
const viaProxy = <A, E>(eff: Effect.Effect<A, E, any>): Promise<A> =>
  Effect.runPromise(
    eff.pipe(Effect.provide(brokerLayerAt({ url: `redis://127.0.0.1:${proxy.port}/${testDb()}` }))) as Effect.Effect<
      A,
      unknown
    >
  )

const leaseIn = 60

describe("lease transitions across a lost reply (proxy in front of real Redis)", () => {
  it("complete (no retention): succeeds, the task is gone, counted once", async () => {
    const msg = makeMsg("wlr-complete", "t1")
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf("complete", complete(msg))
    expect(r.dropped).toBe(1)
    expect(r.value.outcome).toBe("deleted")
    const k = queueKeys(msg.queue)
    expect(await c.exists(k.task(msg.id))).toBe(0)
    expect(await c.lrange(k.active, 0, -1)).toEqual([])
    expect(await c.get(k.processedTotal)).toBe("1")
  })

  it("complete (with retention): succeeds, the task is completed, counted once", async () => {
    const msg = makeMsg("wlr-keep", "t1", { retention: 3600 })
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf("complete", complete(msg))
    expect(r.dropped).toBe(1)
    expect(r.value.outcome).toBe("completed")
    const k = queueKeys(msg.queue)
    expect(await c.hget(k.task(msg.id), "state")).toBe("completed")
    expect(await c.zrange(k.completed, "0", "-1")).toEqual([msg.id])
    expect(await c.get(k.processedTotal)).toBe("1")
  })

  it("retry: succeeds, the task is in the retry set once, counted once", async () => {
    const msg = makeMsg("wlr-retry", "t1")
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf(
      "retry",
      retry(msg, { retryAtMs: Date.now() + 60_000, errorMsg: "boom", isFailure: true })
    )
    expect(r.dropped).toBe(1)
    const k = queueKeys(msg.queue)
    expect(await c.zrange(k.retry, "0", "-1")).toEqual([msg.id])
    expect(await c.hget(k.task(msg.id), "state")).toBe("retry")
    expect(await c.get(k.failedTotal)).toBe("1")
    expect(await c.get(k.processedTotal)).toBe("1")
  })

  it("archive: succeeds, the task is archived once, counted once", async () => {
    const msg = makeMsg("wlr-archive", "t1")
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf("archive", archive(msg, { errorMsg: "boom" }))
    expect(r.dropped).toBe(1)
    const k = queueKeys(msg.queue)
    expect(await c.zrange(k.archived, "0", "-1")).toEqual([msg.id])
    expect(await c.hget(k.task(msg.id), "state")).toBe("archived")
    expect(await c.get(k.failedTotal)).toBe("1")
  })

  it("requeue (shutdown): succeeds, the task is pending once", async () => {
    const msg = makeMsg("wlr-requeue", "t1")
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf("requeue", requeue(msg))
    expect(r.dropped).toBe(1)
    const k = queueKeys(msg.queue)
    expect(await c.lrange(k.pending, 0, -1)).toEqual([msg.id])
    expect(await c.hget(k.task(msg.id), "state")).toBe("pending")
  })

  it("completeMany (one queue's batch): each task succeeds, kept or gone, counted once", async () => {
    const kept = makeMsg("wlr-batch", "k1", { retention: 3600 })
    const gone = makeMsg("wlr-batch", "g1")
    for (const m of [kept, gone]) await putActive(c, m, Math.floor(Date.now() / 1000) + leaseIn)
    const r = await losingReplyOf("completeBatch", completeMany([kept, gone]))
    expect(r.dropped).toBe(1)
    expect(r.value.results.map((x) => (x._tag === "Success" ? x.success.outcome : x.failure._tag))).toEqual([
      "completed",
      "deleted"
    ])
    const k = queueKeys("wlr-batch")
    expect(await c.zrange(k.completed, "0", "-1")).toEqual(["k1"])
    expect(await c.exists(k.task("g1"))).toBe(0)
    expect(await c.lrange(k.active, 0, -1)).toEqual([])
    expect(await c.get(k.processedTotal)).toBe("2")
  })

  it("a real lease loss is still LeaseLost: the task was recovered into the retry set by someone else", async () => {
    const msg = makeMsg("wlr-lost", "t1")
    const k = queueKeys(msg.queue)
    await putActive(c, msg, Math.floor(Date.now() / 1000) + leaseIn)
    // The recoverer took it back (its own message: another error text).
    await viaProxy(retry(msg, { retryAtMs: Date.now() + 60_000, errorMsg: "lease expired", isFailure: true }))
    const again = await viaProxy(
      Effect.flip(retry(msg, { retryAtMs: Date.now() + 60_000, errorMsg: "boom", isFailure: true }))
    )
    expect(again._tag).toBe("LeaseLost")
    const done = await viaProxy(Effect.flip(complete({ ...msg, retention: 3600 })))
    expect(done._tag).toBe("LeaseLost")
    // Forwarded to pending meanwhile (pending_since of the forward, not of a requeue of ours).
    await c.zrem(k.retry, msg.id)
    await c.hset(k.task(msg.id), "state", "pending", "pending_since", "1")
    await c.lpush(k.pending, msg.id)
    expect((await viaProxy(Effect.flip(requeue(msg))))._tag).toBe("LeaseLost")
    expect(await c.get(k.failedTotal)).toBe("1")
  })
})

describe("dequeue across a lost reply", () => {
  it("the tasks the lost reply leased go back to pending: none is left leased to nobody", async () => {
    const queue = "wlr-dequeue"
    const k = queueKeys(queue)
    for (let i = 0; i < 10; i++) await putPending(c, makeMsg(queue, `d${i}`), Date.now())
    const r = await losingReplyOf("dequeueLease", dequeueLease({ queues: [queue], count: 4 }))
    expect(r.dropped).toBe(1)
    const got = r.value.tasks.map((t) => t.msg.id)
    expect(got.length).toBe(4)
    // Leased: exactly what the worker received; everything else pending.
    expect((await c.lrange(k.active, 0, -1)).sort()).toEqual([...got].sort())
    expect((await c.zrange(k.lease, "0", "-1")).sort()).toEqual([...got].sort())
    const pending = await c.lrange(k.pending, 0, -1)
    expect(pending.length).toBe(6)
    expect(pending.filter((id) => got.includes(id))).toEqual([])
    for (const id of pending) expect(await c.hget(k.task(id), "state")).toBe("pending")
  })

  it("large messages (the lease and SORT in one MULTI): a lost EXEC reply leaves every task either received or pending", async () => {
    const queue = "wlr-dequeue-large"
    const k = queueKeys(queue)
    const big = new Uint8Array(100 * 1024).fill(120)
    for (let i = 0; i < 10; i++) await putPending(c, makeMsg(queue, `l${i}`, { payload: big }), Date.now())
    const before = proxy.dropped()
    const got = await Effect.runPromise(
      Effect.gen(function* () {
        // The first lease learns the queue's message size (the script alone); the second is the MULTI.
        const first = yield* dequeueLease({ queues: [queue], count: 1 })
        const dropped = proxy.dropReplyOf((argv) => argv[0]?.toUpperCase() === "EXEC")
        // A MULTI is not sent again after a reconnect: the call fails (a worker's fetch tries again).
        const second = yield* dequeueLease({ queues: [queue], count: 4 }).pipe(
          Effect.map((r) => r.tasks.map((t) => t.msg.id)),
          Effect.catch(() => Effect.succeed([] as Array<string>))
        )
        yield* Effect.promise(() => dropped)
        return [...first.tasks.map((t) => t.msg.id), ...second]
      }).pipe(Effect.provide(brokerLayerAt({ url: `redis://127.0.0.1:${proxy.port}/${testDb()}` }))) as Effect.Effect<
        Array<string>
      >
    )
    expect(proxy.dropped() - before).toBe(1)
    expect(got).toEqual(["l0"])
    // Leased: exactly what the worker received; everything else back in pending, none leased to nobody.
    expect(await c.lrange(k.active, 0, -1)).toEqual(["l0"])
    expect(await c.zrange(k.lease, "0", "-1")).toEqual(["l0"])
    const pending = await c.lrange(k.pending, 0, -1)
    expect(pending.length).toBe(9)
    for (const id of pending) expect(await c.hget(k.task(id), "state")).toBe("pending")
    expect(await c.exists(k.prefix + "leasing")).toBe(0)
  })

  it("a ride of large messages (its own MULTI after the completions): a lost EXEC reply gives back what it leased; the completions stand", async () => {
    const queue = "wlr-ride-large"
    const k = queueKeys(queue)
    const big = new Uint8Array(100 * 1024).fill(120)
    const done = [makeMsg(queue, "d0", { payload: big }), makeMsg(queue, "d1", { payload: big })]
    for (const m of done) await putActive(c, m, Math.floor(Date.now() / 1000) + leaseIn)
    for (let i = 0; i < 6; i++) await putPending(c, makeMsg(queue, `r${i}`, { payload: big }), Date.now())
    const before = proxy.dropped()
    const outcome = await viaProxy(
      Effect.gen(function* () {
        const { messageSizes } = yield* Broker
        messageSizes.record(queue, 1, big.length)
        const ride = dequeueLeaseCall(queue, 3, 30_000, Date.now(), { sizes: messageSizes, byIds: true })
        const dropped = proxy.dropReplyOf((argv) => argv[0]?.toUpperCase() === "EXEC")
        const r = yield* completeMany(done, [ride.call], [ride.lease])
        const reply = r.extra[0]!
        // As the acker lands a ride: a reply that failed goes to `lost`, which gives back what the call may have leased.
        const got = yield* (reply.ok ? ride.land(reply.value) : ride.lost(reply.error)).pipe(
          Effect.map((g) => g.tasks.map((t) => t.msg.id)),
          Effect.catch(() => Effect.succeed([] as Array<string>))
        )
        yield* Effect.promise(() => dropped)
        return { completed: r.results.map((x) => x._tag), got, rideOk: reply.ok }
      })
    )
    expect(proxy.dropped() - before).toBe(1)
    expect(outcome.completed).toEqual(["Success", "Success"])
    expect(outcome.rideOk).toBe(false)
    expect(outcome.got).toEqual([])
    // The completions ran; what the ride leased is pending again, none leased to nobody, no leasing list left.
    expect(await c.exists(k.task("d0"), k.task("d1"))).toBe(0)
    expect(await c.lrange(k.active, 0, -1)).toEqual([])
    expect(await c.zcard(k.lease)).toBe(0)
    const pending = await c.lrange(k.pending, 0, -1)
    expect([...pending].sort()).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"])
    for (const id of pending) expect(await c.hget(k.task(id), "state")).toBe("pending")
    expect(await c.exists(k.prefix + "leasing")).toBe(0)
  })

  it("without a lost reply nothing is given back (the leases stay with the worker)", async () => {
    const queue = "wlr-dequeue-plain"
    const k = queueKeys(queue)
    for (let i = 0; i < 5; i++) await putPending(c, makeMsg(queue, `p${i}`), Date.now())
    const got = await viaProxy(dequeueLease({ queues: [queue], count: 3 }))
    expect(got.tasks.length).toBe(3)
    expect(await c.zcard(k.lease)).toBe(3)
    expect(await c.llen(k.pending)).toBe(2)
  })
})
