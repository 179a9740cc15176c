/**
 * A queue's flow-control limit in the lease scripts (lua/includes/flowLimit.lua): a rate (GCRA with
 * a burst) and a concurrency cap, applied by dequeueLease and by the lease that rides on a
 * completion (completeAndLease), with the wait until the next allowed task in the reply; an enqueue
 * never hands a limited queue's task straight to a parked worker. Time is TestClock's: the scripts
 * take now from the caller.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Broker } from "../../src/broker/Broker.js"
import { completeMany } from "../../src/steps/complete.js"
import { dequeueLease, dequeueLeaseCall, leaseFrom } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { clearQueueLimit, getQueueLimit, parseRate, setQueueLimit } from "../../src/steps/queueLimit.js"
import { getQueueInfo } from "../../src/inspector/queueInfo.js"
import { queueMetricsText } from "../../src/observability/queueMetrics.js"
import { parkedPresenceChannel, queueKeys, wakeChannel } from "../../src/wire/keys.js"
import { baseNowMs, io, makeMsg, putPending, stepsTestDb, testBrokerLayer } from "../support/arrange.js"
import { rawClient } from "../support/redis.js"

const c = stepsTestDb()

const fill = (queue: string, n: number) =>
  io(async () => {
    for (let i = 0; i < n; i++) await putPending(c, makeMsg(queue, `${queue}-${i}`), baseNowMs)
  })

layer(testBrokerLayer())("queue limits (real Redis)", (it) => {
  it.effect(
    "a rate limit leases no more than the rate allows, and says when the next task is allowed (GCRA with a burst)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* fill("fl-rate", 20)
        const stored = yield* setQueueLimit("fl-rate", { rate: { limit: 10, per: "1s" }, burst: 3 })
        expect(stored).toEqual({ rate: { limit: 10, perMs: 1000, intervalMs: 100, burst: 3 } })
        // A quiet queue: the burst (3) at once, then one every 100 ms.
        const first = yield* dequeueLease({ queues: ["fl-rate"], count: 10 })
        expect(first.tasks).toHaveLength(3)
        expect(first.limited).toEqual({ untilMs: baseNowMs + 100, capped: false })
        yield* TestClock.adjust(50)
        const early = yield* dequeueLease({ queues: ["fl-rate"], count: 10 })
        expect(early.tasks).toHaveLength(0)
        expect(early.limited).toEqual({ untilMs: baseNowMs + 100, capped: false })
        yield* TestClock.adjust(50)
        const onTime = yield* dequeueLease({ queues: ["fl-rate"], count: 10 })
        expect(onTime.tasks).toHaveLength(1)
        expect(onTime.limited).toEqual({ untilMs: baseNowMs + 200, capped: false })
        // A quiet second refills the burst, not more.
        yield* TestClock.adjust(1000)
        expect((yield* dequeueLease({ queues: ["fl-rate"], count: 10 })).tasks).toHaveLength(3)
        // Cleared: unlimited again, no wait in the reply.
        yield* clearQueueLimit("fl-rate")
        expect(yield* getQueueLimit("fl-rate")).toBeUndefined()
        const free = yield* dequeueLease({ queues: ["fl-rate"], count: 10 })
        expect(free.tasks).toHaveLength(10)
        expect(free.limited).toBeUndefined()
        expect(yield* io(() => c.exists(queueKeys("fl-rate").flow))).toBe(0)
      })
  )

  it.effect("a limited queue holds back only itself: the dequeue goes on to the next queue", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* fill("fl-next-a", 5)
      yield* fill("fl-next-b", 5)
      yield* setQueueLimit("fl-next-a", { rate: { limit: 1, per: "1s" } })
      const got = yield* dequeueLease({ queues: ["fl-next-a", "fl-next-b"], count: 4 })
      expect(got.tasks.map((t) => t.msg.queue)).toEqual(["fl-next-a", "fl-next-b", "fl-next-b", "fl-next-b"])
      expect(got.limited).toEqual({ untilMs: baseNowMs + 1000, capped: false })
      // The tasks held back are still pending, untouched.
      expect(yield* io(() => c.llen(queueKeys("fl-next-a").pending))).toBe(4)
      expect(yield* io(() => c.hget(queueKeys("fl-next-a").task("fl-next-a-4"), "state"))).toBe("pending")
    })
  )

  it.effect("a queue that runs out of tasks before its limit does is not held back (no wait in the reply)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* fill("fl-few", 2)
      yield* setQueueLimit("fl-few", { rate: { limit: 100, per: "1s" }, burst: 10, concurrency: 5 })
      const got = yield* dequeueLease({ queues: ["fl-few"], count: 4 })
      expect(got.tasks).toHaveLength(2)
      expect(got.limited).toBeUndefined()
      // The rate was charged for the two tasks taken only.
      expect(Number(yield* io(() => c.hget(queueKeys("fl-few").flow, "tat")))).toBe(baseNowMs + 20)
    })
  )

  it.effect(
    "a concurrency cap counts the queue's active tasks; a completion frees room for the lease riding on it (completeAndLease)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* fill("fl-cap", 6)
        yield* setQueueLimit("fl-cap", { concurrency: 2 })
        const first = yield* dequeueLease({ queues: ["fl-cap"], count: 5 })
        expect(first.tasks).toHaveLength(2)
        expect(first.limited).toEqual({ untilMs: undefined, capped: true })
        const none = yield* dequeueLease({ queues: ["fl-cap"], count: 5 })
        expect(none.tasks).toHaveLength(0)
        expect(none.limited?.capped).toBe(true)
        // One task completes with a lease riding on it: the completion runs first and frees one place.
        const ride = dequeueLeaseCall("fl-cap", 5, 30_000, baseNowMs)
        const r = yield* completeMany([first.tasks[0]!.msg], [ride.call], [ride.lease])
        const reply = r.extra[0]!
        if (!reply.ok) throw reply.error
        const rode = yield* ride.land(reply.value)
        expect(rode.tasks).toHaveLength(1)
        expect(rode.limited).toEqual({ untilMs: undefined, capped: true })
        expect(yield* io(() => c.llen(queueKeys("fl-cap").active))).toBe(2)
        expect(yield* io(() => c.llen(queueKeys("fl-cap").pending))).toBe(3)
      })
  )

  it.effect("the lease riding on a completion is held to the rate too", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* fill("fl-ride", 6)
      yield* setQueueLimit("fl-ride", { rate: { limit: 2, per: "1s" } })
      const first = yield* dequeueLease({ queues: ["fl-ride"], count: 5 })
      expect(first.tasks).toHaveLength(1)
      yield* TestClock.adjust(100)
      const ride = dequeueLeaseCall("fl-ride", 5, 30_000, baseNowMs + 100)
      const r = yield* completeMany([first.tasks[0]!.msg], [ride.call], [ride.lease])
      const reply = r.extra[0]!
      if (!reply.ok) throw reply.error
      const rode = yield* ride.land(reply.value)
      expect(rode.tasks).toHaveLength(0)
      expect(rode.limited).toEqual({ untilMs: baseNowMs + 500, capped: false })
    })
  )

  it.effect("bad limits are refused with a clear InvalidArgument, and nothing is written", () =>
    Effect.gen(function* () {
      yield* fill("fl-bad", 1)
      const fails = (eff: Effect.Effect<unknown, unknown, Broker>) => Effect.flip(eff)
      expect(((yield* fails(setQueueLimit("fl-bad", {}))) as { message: string }).message).toMatch(
        /needs a rate or a concurrency cap/
      )
      expect(
        ((yield* fails(setQueueLimit("fl-bad", { rate: { limit: 0, per: "1s" } }))) as { field: string }).field
      ).toBe("rate.limit")
      expect(
        ((yield* fails(setQueueLimit("fl-bad", { rate: { limit: 5, per: "soon" } }))) as { message: string }).message
      ).toMatch(/rate.per must be a period/)
      expect(((yield* fails(setQueueLimit("fl-bad", { concurrency: 1.5 }))) as { field: string }).field).toBe(
        "concurrency"
      )
      expect(((yield* fails(setQueueLimit("fl-bad", { burst: 3, concurrency: 1 }))) as { field: string }).field).toBe(
        "burst"
      )
      expect(((yield* fails(setQueueLimit("fl-nope", { concurrency: 1 }))) as { _tag: string })._tag).toBe(
        "QueueNotFound"
      )
      expect(((yield* fails(parseRate("100 per second"))) as { field: string }).field).toBe("rate")
      expect(yield* parseRate("100/s")).toEqual({ limit: 100, per: 1000 })
      expect(yield* parseRate("5/1m")).toEqual({ limit: 5, per: 60_000 })
      expect(yield* parseRate("20/500ms")).toEqual({ limit: 20, per: 500 })
      expect(yield* io(() => c.exists(queueKeys("fl-bad").flow))).toBe(0)
    })
  )

  it.effect("replacing a limit keeps the rate's state (no fresh burst) and drops the parts not given", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* fill("fl-replace", 10)
      yield* setQueueLimit("fl-replace", { rate: { limit: 10, per: "1s" }, concurrency: 8 })
      expect((yield* dequeueLease({ queues: ["fl-replace"], count: 5 })).tasks).toHaveLength(1)
      yield* setQueueLimit("fl-replace", { rate: { limit: 10, per: "1s" } })
      expect(yield* getQueueLimit("fl-replace")).toEqual({
        rate: { limit: 10, perMs: 1000, intervalMs: 100, burst: 1 }
      })
      const again = yield* dequeueLease({ queues: ["fl-replace"], count: 5 })
      expect(again.tasks).toHaveLength(0)
      expect(again.limited).toEqual({ untilMs: baseNowMs + 100, capped: false })
      // From one a minute to ten a second: the wait the slow rate left (a minute) is cut to the new rate's.
      yield* setQueueLimit("fl-replace", { rate: { limit: 1, per: "1m" } })
      yield* TestClock.adjust(100)
      expect((yield* dequeueLease({ queues: ["fl-replace"], count: 5 })).tasks).toHaveLength(1)
      expect((yield* dequeueLease({ queues: ["fl-replace"], count: 5 })).limited).toEqual({
        untilMs: baseNowMs + 100 + 60_000,
        capped: false
      })
      yield* setQueueLimit("fl-replace", { rate: { limit: 10, per: "1s" } })
      expect((yield* dequeueLease({ queues: ["fl-replace"], count: 5 })).limited).toEqual({
        untilMs: baseNowMs + 200,
        capped: false
      })
    })
  )

  it.effect(
    "an enqueue does not hand a limited queue's task to a parked worker: it stays pending and the workers are woken",
    () =>
      Effect.gen(function* () {
        const server = `flow-park-${process.pid}`
        const sub = rawClient()
        const wakes: Array<string> = []
        sub.on("message", (channel: string, message: string) => {
          if (channel === wakeChannel) wakes.push(message)
        })
        yield* io(() => sub.subscribe(wakeChannel, parkedPresenceChannel(server)))
        const now = Date.now()
        yield* TestClock.setTime(now)
        const parkOn = (queue: string) =>
          Effect.gen(function* () {
            const got = yield* leaseFrom([queue], 1, 30_000, { parking: { server, parked: () => {} } })
            expect(got.tasks).toEqual([])
            yield* io(() => c.set(queueKeys(queue).alive(server), "1", "PX", 60_000))
          })
        // Control: unlimited, the task is handed over (written active).
        yield* io(() => c.sadd("asynq:queues", "fl-hand-free", "fl-hand-lim"))
        yield* parkOn("fl-hand-free")
        const handed = yield* enqueue("t:x", { n: 1 }, { queue: "fl-hand-free" })
        expect(yield* io(() => c.hget(queueKeys("fl-hand-free").task(handed.id), "state"))).toBe("active")
        // Limited: pending, and the wake-up published.
        yield* setQueueLimit("fl-hand-lim", { concurrency: 10 })
        yield* parkOn("fl-hand-lim")
        const kept = yield* enqueue("t:x", { n: 2 }, { queue: "fl-hand-lim" })
        expect(yield* io(() => c.hget(queueKeys("fl-hand-lim").task(kept.id), "state"))).toBe("pending")
        expect(yield* io(() => c.lrange(queueKeys("fl-hand-lim").pending, 0, -1))).toEqual([kept.id])
        expect(yield* io(() => c.llen(queueKeys("fl-hand-lim").active))).toBe(0)
        yield* io(async () => {
          for (let i = 0; i < 100 && !wakes.includes("fl-hand-lim"); i++) await new Promise((r) => setTimeout(r, 10))
        })
        expect(wakes).toContain("fl-hand-lim")
        sub.disconnect()
      })
  )

  it.effect("queue info and /metrics show a limit; a queue without one has none (and no extra metric family)", () =>
    Effect.gen(function* () {
      yield* fill("fl-shown", 1)
      yield* fill("fl-plain", 1)
      yield* setQueueLimit("fl-shown", { rate: { limit: 30, per: "1m" }, burst: 2, concurrency: 4 })
      expect((yield* getQueueInfo("fl-shown")).limit).toEqual({
        rate: { limit: 30, perMs: 60_000, intervalMs: 2000, burst: 2 },
        concurrency: 4
      })
      expect("limit" in (yield* getQueueInfo("fl-plain"))).toBe(false)
      const text = yield* queueMetricsText()
      expect(text).toContain('effect_asynq_queue_rate_limit_per_second{queue="fl-shown"} 0.5\n')
      expect(text).toContain('effect_asynq_queue_rate_limit_burst{queue="fl-shown"} 2\n')
      expect(text).toContain('effect_asynq_queue_concurrency_limit{queue="fl-shown"} 4\n')
      expect(text).toContain("# TYPE effect_asynq_queue_concurrency_limit gauge\n")
      expect(text).not.toContain('limit{queue="fl-plain"}')
      expect(text).not.toContain("effect_asynq_queue_key_")
      yield* setQueueLimit("fl-shown", { perKey: { rate: { limit: 10, per: "1s" }, burst: 3, concurrency: 2 } })
      const keyed = yield* queueMetricsText()
      expect(keyed).toContain('effect_asynq_queue_key_rate_limit_per_second{queue="fl-shown"} 10\n')
      expect(keyed).toContain('effect_asynq_queue_key_rate_limit_burst{queue="fl-shown"} 3\n')
      expect(keyed).toContain('effect_asynq_queue_key_concurrency_limit{queue="fl-shown"} 2\n')
      expect(keyed).not.toContain('effect_asynq_queue_concurrency_limit{queue="fl-shown"}')
      yield* clearQueueLimit("fl-shown")
      yield* clearQueueLimit("fl-rate")
      yield* clearQueueLimit("fl-cap")
      yield* clearQueueLimit("fl-next-a")
      yield* clearQueueLimit("fl-few")
      yield* clearQueueLimit("fl-ride")
      yield* clearQueueLimit("fl-replace")
      yield* clearQueueLimit("fl-hand-lim")
      expect(yield* queueMetricsText()).not.toContain("effect_asynq_queue_")
    })
  )
})
