import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { extendLease } from "../../src/steps/extendLease.js"
import { janitor } from "../../src/steps/janitor.js"
import { pauseQueue, unpauseQueue } from "../../src/steps/pauseQueue.js"
import { publishCancel } from "../../src/broker/publishCancel.js"
import { recover } from "../../src/steps/recover.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putInZset,
  putPending,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"
import { rawClient } from "../support/redis.js"

const c = stepsTestDb()

layer(testBrokerLayer())("extendLease / janitor / pause / publishCancel (real Redis)", (it) => {
  it.effect("extendLease moves held leases forward and reports the ones that were lost", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "el"
      yield* io(async () => {
        for (const id of ["a", "b", "c"]) await putPending(c, makeMsg(q, id), baseNowMs)
      })
      yield* dequeueLease({ queues: [q], count: 3 })
      yield* TestClock.adjust("100 seconds") // all three leases expired; recover takes "a" and "b"
      yield* recover({ queues: [q], batch: 2, retryDelayMs: () => 1000 })
      const r = yield* extendLease({ queue: q, ids: ["a", "b", "c", "never"] })
      expect(r).toEqual({ extended: ["c"], lost: ["a", "b", "never"], expiresAtMs: baseNowMs + 130_000 })
      expect(yield* io(() => zsetOf(c, queueKeys(q).lease))).toEqual([["c", nowSec + 130]])
      // a shorter extension never pulls a lease back
      yield* extendLease({ queue: q, ids: ["c"], leaseMs: 5000 })
      expect(yield* io(() => zsetOf(c, queueKeys(q).lease))).toEqual([["c", nowSec + 130]])
      expect(yield* extendLease({ queue: q, ids: [] })).toMatchObject({ extended: [], lost: [] })
    })
  )

  it.effect("janitor deletes completed tasks whose retention ended, at most `batch` per queue per call", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "jn"
      const k = queueKeys(q)
      yield* io(async () => {
        for (let i = 0; i < 5; i++)
          await putInZset(c, makeMsg(q, `old${i}`, { retention: 10 }), "completed", nowSec - 10 + i)
        await putInZset(c, makeMsg(q, "fresh", { retention: 3600 }), "completed", nowSec + 3600)
        // a stale zset entry whose hash was reused for a task in another state is not deleted
        await putInZset(c, makeMsg(q, "reused"), "completed", nowSec - 50)
        await c.hset(k.task("reused"), "state", "pending")
      })
      expect(yield* janitor({ queues: [q, "jn-empty"], batch: 3 })).toEqual({
        deleted: 2,
        byQueue: { [q]: 2, "jn-empty": 0 },
        failedQueues: []
      })
      expect(yield* io(() => c.exists(k.task("reused")))).toBe(1)
      expect(yield* janitor({ queues: [q], batch: 3 })).toEqual({ deleted: 3, byQueue: { [q]: 3 }, failedQueues: [] })
      expect(yield* janitor({ queues: [q], batch: 3 })).toEqual({ deleted: 0, byQueue: { [q]: 0 }, failedQueues: [] })
      expect(yield* io(() => zsetOf(c, k.completed))).toEqual([["fresh", nowSec + 3600]])
      expect(yield* io(() => c.exists(k.task("fresh")))).toBe(1)
      yield* TestClock.adjust("1 hour")
      expect((yield* janitor({ queues: [q] })).deleted).toBe(1)
    })
  )

  it.effect(
    "reproduces state j: pause writes unix seconds with no expiry; pausing twice / unpausing twice is InvalidState",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const k = queueKeys("default")
        yield* io(() => putPending(c, makeMsg("default", "j-pending"), baseNowMs))
        // Only a queue registered in asynq:queues (as every enqueue does) can be paused: a typo must not look done.
        const unknown = yield* Effect.flip(pauseQueue("defualt"))
        expect(unknown._tag).toBe("QueueNotFound")
        expect(yield* io(() => c.exists(queueKeys("defualt").paused))).toBe(0)
        yield* pauseQueue("default")
        expect(yield* io(() => c.get(k.paused))).toBe(String(nowSec))
        expect(yield* io(() => c.ttl(k.paused))).toBe(-1)
        const again = yield* Effect.flip(pauseQueue("default"))
        expect(again._tag).toBe("InvalidState")
        expect(again.message).toBe(`queue "default" is already paused`)
        expect((yield* dequeueLease({ queues: ["default"] })).tasks).toEqual([])
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["j-pending"])
        yield* unpauseQueue("default")
        expect(yield* io(() => c.exists(k.paused))).toBe(0)
        const notPaused = yield* Effect.flip(unpauseQueue("default"))
        expect(notPaused.message).toBe(`queue "default" is not paused`)
        expect((yield* dequeueLease({ queues: ["default"] })).tasks.map((t) => t.msg.id)).toEqual(["j-pending"])
      })
  )

  it.effect("publishCancel sends the task id on asynq:cancel to subscribers", () =>
    Effect.gen(function* () {
      const sub = rawClient()
      // subscribed (SUBSCRIBE answered) before anything is published
      const received = yield* io(async () => {
        await sub.subscribe("asynq:cancel")
        return {
          next: new Promise<string>((resolve) => sub.once("message", (_channel: string, m: string) => resolve(m)))
        }
      })
      const receivers = yield* publishCancel("task-123")
      // Pub/sub is server-wide: workers of other test files may be subscribed too.
      expect(receivers).toBeGreaterThanOrEqual(1)
      expect(yield* io(() => received.next)).toBe("task-123")
      sub.disconnect()
    })
  )
})
