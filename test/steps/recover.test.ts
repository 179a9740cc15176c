import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { retryScript } from "../../src/broker/retry.js"
import { runScript } from "../../src/broker/script.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { recover } from "../../src/steps/recover.js"
import { retriedMessage } from "../../src/steps/retry.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putActive,
  putPending,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"

const c = stepsTestDb()

layer(testBrokerLayer())("recover (real Redis)", (it) => {
  it.effect("retries a task whose lease expired (30 s grace), after which its old worker gets LeaseLost", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc1"
      const k = queueKeys(q)
      yield* io(() => putPending(c, makeMsg(q, "t1", { retry: 3 }), baseNowMs))
      const { tasks } = yield* dequeueLease({ queues: [q] })
      yield* TestClock.adjust("59 seconds") // lease ran out at +30 s; the grace ends at +60 s
      expect(yield* recover({ queues: [q], retryDelayMs: () => 10_000 })).toEqual({
        retried: 0,
        archived: 0,
        corrupt: [],
        failedQueues: []
      })
      yield* TestClock.adjust("1 second")
      expect(yield* recover({ queues: [q], retryDelayMs: () => 10_000 })).toEqual({
        retried: 1,
        archived: 0,
        corrupt: [],
        failedQueues: []
      })
      expect(yield* io(() => zsetOf(c, k.retry))).toEqual([["t1", nowSec + 70]])
      const t = yield* io(() => readTask(c, q, "t1"))
      expect(t.fields).toEqual({ state: "retry" })
      expect(t.msg).toMatchObject({ retried: 1, errorMsg: "asynq: task lease expired", lastFailedAt: nowSec + 60 })
      expect(yield* io(() => c.mget(k.processedTotal, k.failedTotal))).toEqual(["1", "1"])
      const lost = yield* Effect.flip(complete(tasks[0]!.msg))
      expect(lost._tag).toBe("LeaseLost")
    })
  )

  it.effect(
    "a stale lease entry (task no longer active) is dropped, so it cannot block the expired tasks behind it",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "rc-stale"
        const k = queueKeys(q)
        yield* io(async () => {
          // Two oldest lease entries whose tasks are no longer in the active list (one retry-bound, one archive-bound)…
          await putActive(c, makeMsg(q, "gone1", { retry: 3 }), nowSec - 100)
          await putActive(c, makeMsg(q, "gone2", { retry: 0 }), nowSec - 99)
          await c.lrem(k.active, 0, "gone1")
          await c.lrem(k.active, 0, "gone2")
          // …ahead of a real expired task.
          await putActive(c, makeMsg(q, "real", { retry: 3 }), nowSec - 50)
        })
        // With a batch of 2, the first call sees only the stale entries: it moves nothing but drops them.
        expect(yield* recover({ queues: [q], batch: 2, graceMs: 0, retryDelayMs: () => 1000 })).toEqual({
          retried: 0,
          archived: 0,
          corrupt: [],
          failedQueues: []
        })
        expect(yield* io(() => zsetOf(c, k.lease))).toEqual([["real", nowSec - 50]])
        expect(yield* recover({ queues: [q], batch: 2, graceMs: 0, retryDelayMs: () => 1000 })).toEqual({
          retried: 1,
          archived: 0,
          corrupt: [],
          failedQueues: []
        })
        expect(yield* io(() => c.zcard(k.lease))).toBe(0)
        // The stale tasks' hashes are left as they were (only the lease entry was wrong).
        expect((yield* io(() => readTask(c, q, "gone1"))).fields).toEqual({ state: "active" })
      })
  )

  it.effect("uses asynq's default delay (n^4 + 15 + rand(30)·(n+1) s) and a custom grace", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc2"
      yield* io(async () => {
        await putActive(c, makeMsg(q, "n0", { retried: 0 }), nowSec - 1)
        await putActive(c, makeMsg(q, "n2", { retried: 2 }), nowSec - 1)
      })
      expect((yield* recover({ queues: [q], graceMs: 0 })).retried).toBe(2)
      const scores = Object.fromEntries(yield* io(() => zsetOf(c, queueKeys(q).retry)))
      expect(scores.n0! - nowSec).toBeGreaterThanOrEqual(15)
      expect(scores.n0! - nowSec).toBeLessThanOrEqual(15 + 29)
      expect(scores.n2! - nowSec).toBeGreaterThanOrEqual(16 + 15)
      expect(scores.n2! - nowSec).toBeLessThanOrEqual(16 + 15 + 29 * 3)
    })
  )

  it.effect("archives an expired task with no retries left, with the lease-expired error", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc3"
      yield* io(() => putActive(c, makeMsg(q, "done-for", { retry: 2, retried: 2 }), nowSec - 31))
      expect(yield* recover({ queues: [q] })).toEqual({ retried: 0, archived: 1, corrupt: [], failedQueues: [] })
      expect(yield* io(() => zsetOf(c, queueKeys(q).archived))).toEqual([["done-for", nowSec]])
      const t = yield* io(() => readTask(c, q, "done-for"))
      expect(t.fields.state).toBe("archived")
      expect(t.msg).toMatchObject({ retried: 2, errorMsg: "asynq: task lease expired", lastFailedAt: nowSec })
    })
  )

  it.effect("archives an expired task whose msg is corrupt and reports it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc4"
      const k = queueKeys(q)
      yield* io(async () => {
        await c.hset(k.task("junk"), "msg", Buffer.from([0xff]), "state", "active")
        await c.lpush(k.active, "junk")
        await c.zadd(k.lease, nowSec - 100, "junk")
        await putActive(c, makeMsg(q, "fine"), nowSec - 100)
      })
      const r = yield* recover({ queues: [q], retryDelayMs: () => 1000 })
      expect(r.retried).toBe(1)
      expect(r.corrupt.map((x) => [x.id, x.outcome])).toEqual([["junk", "archived"]])
      expect(r.corrupt[0]!.error).toMatch(/^asynq: task message is corrupt: /)
      expect(yield* io(() => c.hget(k.task("junk"), "state"))).toBe("archived")
      expect(yield* io(() => c.zcard(k.lease))).toBe(0)
    })
  )

  it.effect("takes at most `batch` tasks per queue per call", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc5"
      yield* io(async () => {
        for (let i = 0; i < 5; i++) await putActive(c, makeMsg(q, `b${i}`), nowSec - 100 + i)
      })
      expect((yield* recover({ queues: [q], batch: 2, retryDelayMs: () => 0 })).retried).toBe(2)
      expect(yield* io(() => c.zrange(queueKeys(q).lease, "0", "-1"))).toEqual(["b2", "b3", "b4"])
    })
  )

  it.effect("two recoverers on separate connections at once never move a task twice", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "rc6"
      const k = queueKeys(q)
      const n = 40
      yield* io(async () => {
        for (let i = 0; i < n; i++)
          await putActive(c, makeMsg(q, `x${i}`, { retry: i % 2 === 0 ? 5 : 0 }), nowSec - 100)
      })
      const one = recover({ queues: [q], retryDelayMs: () => 5000 })
      const [a, b] = yield* Effect.all(
        [one.pipe(Effect.provide(testBrokerLayer())), one.pipe(Effect.provide(testBrokerLayer()))],
        { concurrency: 2 }
      )
      expect(a.retried + b.retried).toBe(n / 2)
      expect(a.archived + b.archived).toBe(n / 2)
      expect(yield* io(() => c.zcard(k.retry))).toBe(n / 2)
      expect(yield* io(() => c.zcard(k.archived))).toBe(n / 2)
      expect(yield* io(() => c.mget(k.processedTotal, k.failedTotal))).toEqual([String(n), String(n)])
      for (let i = 0; i < n; i += 2) expect((yield* io(() => readTask(c, q, `x${i}`))).msg!.retried).toBe(1)
    })
  )

  it.effect("a recovery move is refused when the task was leased again after it was listed", () =>
    Effect.gen(function* () {
      const q = "rc7"
      const msg = makeMsg(q, "re-leased")
      yield* io(() => putActive(c, msg, nowSec + 30))
      const notMoved = yield* runScript(retryScript, {
        updated: retriedMessage(msg, "asynq: task lease expired", true, baseNowMs),
        retryAtMs: baseNowMs,
        isFailure: true,
        nowMs: baseNowMs,
        leaseCutoffSec: nowSec - 30
      }).pipe(Effect.flip)
      expect(notMoved._tag).toBe("LeaseLost")
      expect(yield* io(() => c.lrange(queueKeys(q).active, 0, -1))).toEqual(["re-leased"])
      expect(yield* io(() => c.exists(queueKeys(q).failedTotal))).toBe(0)
    })
  )
})
