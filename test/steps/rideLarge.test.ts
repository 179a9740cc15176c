/**
 * A ride (a dequeue sent in the round trip of a batch of completions: src/processor/intake/rideSource.ts)
 * on a queue whose messages are large leases them the large-message way: the lease script in ids
 * mode and `SORT … GET` in a MULTI of its own, sent right after the batch's completions on the same
 * connection (src/redis/ioredisBatch.ts), instead of inside the completion script, which would copy
 * every message through Lua. The Broker here is the usual one over a real Redis, its batches recorded.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Broker } from "../../src/broker/Broker.js"
import { KnownQueues } from "../../src/broker/knownQueues.js"
import { leasingListKey } from "../../src/broker/leaseByIds.js"
import { MessageSizes } from "../../src/broker/messageSizes.js"
import { RedisService } from "../../src/redis/RedisService.js"
import { completeMany } from "../../src/steps/complete.js"
import { dequeueLeaseCall } from "../../src/steps/dequeueLease.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, baseNowSec, io, makeMsg, putActive, putPending, stepsTestDb } from "../support/arrange.js"
import { testRedisLayer } from "../support/redis.js"

const c = stepsTestDb()

/** Each batch's calls: the script's name, `+sort` for a call with a SORT read. */
const batches: Array<Array<string>> = []

const recordingBroker = Layer.effect(
  Broker,
  Effect.map(RedisService, (redis) => ({
    redis: {
      ...redis,
      scriptBatch: (calls, opts) => {
        batches.push(calls.map((call) => (call.sorted ? `${call.script}+sort` : call.script)))
        return redis.scriptBatch(calls, opts)
      }
    } satisfies typeof redis,
    knownQueues: new KnownQueues(),
    messageSizes: new MessageSizes()
  }))
).pipe(Layer.provide(testRedisLayer()))

const big = 100 * 1024

/** `done` active tasks (d0…) and `pending` pending ones (t0…) of `queue`, every payload `big` bytes. */
const arrange = (queue: string, done: number, pending: number) =>
  io(async () => {
    const payload = new Uint8Array(big).fill(120)
    for (let i = 0; i < done; i++) await putActive(c, makeMsg(queue, `d${i}`, { payload }), baseNowSec + 60)
    for (let i = 0; i < pending; i++) await putPending(c, makeMsg(queue, `t${i}`, { payload }), baseNowMs)
    return Array.from({ length: done }, (_, i) => makeMsg(queue, `d${i}`, { payload }))
  })

/** A case's start: the clock at the arranged tasks' time, `arrange`'s tasks, no batch recorded yet. */
const setUp = (queue: string, done: number, pending: number) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(baseNowMs)
    const completed = yield* arrange(queue, done, pending)
    batches.length = 0
    return completed
  })

/** Completes `done` with a ride of `count` tasks of their queue riding along (the ids-mode way when `byIds`), as the acker does. */
const completeWithRide = (done: ReadonlyArray<ReturnType<typeof makeMsg>>, count: number, byIds: boolean) =>
  Effect.gen(function* () {
    const { messageSizes } = yield* Broker
    const queue = done[0]!.queue
    const ride = dequeueLeaseCall(queue, count, 30_000, baseNowMs, { sizes: messageSizes, byIds })
    const r = yield* completeMany(done, [ride.call], [ride.lease])
    for (const result of r.results) expect(result._tag).toBe("Success")
    const reply = r.extra[0]!
    const got = yield* reply.ok ? ride.land(reply.value) : ride.lost(reply.error)
    return got
  })

layer(recordingBroker)("a ride on a queue of large messages (real Redis)", (it) => {
  it.effect("goes as its own MULTI with SORT after the completions: the tasks come whole, in order, leased", () =>
    Effect.gen(function* () {
      const queue = "rl-sorted"
      const k = queueKeys(queue)
      const done = yield* setUp(queue, 2, 6)
      const got = yield* completeWithRide(done, 4, true)
      // The completions in the pipeline (completeBatch), the ride in a MULTI of its own: not merged into completeAndLease.
      expect(batches).toEqual([["completeBatch", "dequeueLease+sort"]])
      expect(got.tasks.map((t) => t.msg.id)).toEqual(["t0", "t1", "t2", "t3"])
      for (const t of got.tasks) {
        expect(t.msg.payload?.length).toBe(big)
        expect(t.leaseExpiresAtMs).toBe(baseNowMs + 30_000)
      }
      expect(got.corrupt).toEqual([])
      // Redis: the completed tasks gone, the ridden ones active under a lease, the rest pending, no leasing list left.
      expect(yield* io(() => c.exists(k.task("d0"), k.task("d1")))).toBe(0)
      expect((yield* io(() => c.lrange(k.active, 0, -1))).sort()).toEqual(["t0", "t1", "t2", "t3"])
      expect((yield* io(() => c.zrange(k.lease, "0", "-1"))).sort()).toEqual(["t0", "t1", "t2", "t3"])
      expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["t5", "t4"])
      for (const id of ["t0", "t3"]) expect(yield* io(() => c.hget(k.task(id), "state"))).toBe("active")
      expect(yield* io(() => c.exists(leasingListKey(queue)))).toBe(0)
    })
  )

  it.effect("the script-only ride (small messages) still goes in the completion's own call", () =>
    Effect.gen(function* () {
      const done = yield* setUp("rl-merged", 2, 3)
      const got = yield* completeWithRide(done, 2, false)
      expect(batches).toEqual([["completeAndLease"]])
      expect(got.tasks.map((t) => t.msg.id)).toEqual(["t0", "t1"])
    })
  )

  it.effect("works when Redis has lost its scripts (NOSCRIPT inside the MULTI: sent again with the source)", () =>
    Effect.gen(function* () {
      const queue = "rl-noscript"
      const k = queueKeys(queue)
      const done = yield* setUp(queue, 1, 3)
      // Cached on this connection first, then flushed: the batch goes as EVALSHA and meets NOSCRIPT.
      yield* completeWithRide(yield* arrange("rl-warm", 1, 1), 1, true)
      yield* io(() => c.script("FLUSH"))
      const got = yield* completeWithRide(done, 2, true)
      expect(got.tasks.map((t) => t.msg.id)).toEqual(["t0", "t1"])
      expect(got.tasks[1]!.msg.payload?.length).toBe(big)
      expect(yield* io(() => c.exists(k.task("d0")))).toBe(0)
      expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["t2"])
      expect(yield* io(() => c.exists(leasingListKey(queue)))).toBe(0)
    })
  )
})
