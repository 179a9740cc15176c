import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { archive } from "../../src/steps/archive.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { requeue } from "../../src/steps/requeue.js"
import { retry } from "../../src/steps/retry.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putActive,
  putInZset,
  putPending,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"

const c = stepsTestDb()
const ninetyDays = 90 * 86400

/** Seconds left on a key, against what EXPIREAT (clock now + 90 days) should leave by Redis's clock. */
const expectNinetyDayTtl = (ttl: number, clockNowSec: number) =>
  expect(Math.abs(ttl - (clockNowSec + ninetyDays - Math.floor(Date.now() / 1000)))).toBeLessThanOrEqual(2)

layer(testBrokerLayer())("requeue / retry / archive (real Redis)", (it) => {
  it.effect("requeue puts an active task at the head of pending, so the next dequeue takes it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* io(async () => {
        for (const id of ["r1", "r2", "r3"]) await putPending(c, makeMsg("rq", id), baseNowMs)
      })
      const { tasks } = yield* dequeueLease({ queues: ["rq"] })
      expect(tasks[0]!.msg.id).toBe("r1")
      yield* TestClock.adjust("2 seconds")
      yield* requeue(tasks[0]!.msg)
      const t = yield* io(() => readTask(c, "rq", "r1"))
      expect(t.fields).toEqual({ state: "pending", pending_since: String(BigInt(baseNowMs + 2000) * 1_000_000n) })
      expect(yield* io(() => c.zcard(queueKeys("rq").lease))).toBe(0)
      expect(yield* io(() => c.llen(queueKeys("rq").active))).toBe(0)
      const again = yield* dequeueLease({ queues: ["rq"] })
      expect(again.tasks[0]!.msg.id).toBe("r1")
      const e = yield* Effect.flip(requeue(makeMsg("rq", "r3")))
      expect(e._tag).toBe("LeaseLost")
    })
  )

  it.effect(
    "reproduces state e: a failure goes to retry with retried+1, error, last_failed_at and processed/failed counters",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const msg = makeMsg("default", "e-flaky", { type: "flaky:job", retry: 3 })
        yield* io(() => putPending(c, msg, baseNowMs))
        const { tasks } = yield* dequeueLease({ queues: ["default"] })
        yield* retry(tasks[0]!.msg, { retryAtMs: baseNowMs + 20_000, errorMsg: "boom", isFailure: true })
        const k = queueKeys("default")
        expect(yield* io(() => zsetOf(c, k.retry))).toEqual([["e-flaky", nowSec + 20]])
        const t = yield* io(() => readTask(c, "default", "e-flaky"))
        expect(t.fields).toEqual({ state: "retry" })
        expect(t.msg).toMatchObject({ retried: 1, retry: 3, errorMsg: "boom", lastFailedAt: nowSec, type: "flaky:job" })
        expect(
          yield* io(() => c.mget(k.processedTotal, k.failedTotal, k.processed(baseNowMs), k.failed(baseNowMs)))
        ).toEqual(["1", "1", "1", "1"])
        expect(yield* io(() => c.ttl(k.processedTotal))).toBe(-1)
        expectNinetyDayTtl(yield* io(() => c.ttl(k.processed(baseNowMs))), nowSec)
        expectNinetyDayTtl(yield* io(() => c.ttl(k.failed(baseNowMs))), nowSec)
        expect(yield* io(() => c.llen(k.active))).toBe(0)
        expect(yield* io(() => c.zcard(k.lease))).toBe(0)
      })
  )

  it.effect(
    "a retry that is not a failure keeps retried and counts nothing, but records the error (asynq's Retry)",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const msg = makeMsg("rt2", "nf", { retried: 2 })
        yield* io(() => putActive(c, msg, nowSec + 30))
        yield* retry(msg, { retryAtMs: baseNowMs + 5000, errorMsg: "rate limited", isFailure: false })
        const t = yield* io(() => readTask(c, "rt2", "nf"))
        expect(t.msg).toMatchObject({ retried: 2, errorMsg: "rate limited", lastFailedAt: nowSec })
        const k = queueKeys("rt2")
        expect(
          yield* io(() => c.exists(k.processedTotal, k.failedTotal, k.processed(baseNowMs), k.failed(baseNowMs)))
        ).toBe(0)
        const e = yield* Effect.flip(retry(msg, { retryAtMs: baseNowMs, errorMsg: "x", isFailure: true }))
        expect(e._tag).toBe("LeaseLost")
        expect(e.message).toContain("cannot retry task nf")
      })
  )

  it.effect("reproduces state f: archive records the error, keeps retried, counts processed+failed", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const msg = makeMsg("default", "f-skip", { type: "parse:input", retry: 5 })
      yield* io(() => putActive(c, msg, nowSec + 30))
      const r = yield* archive(msg, { errorMsg: "invalid input: skip retry for the task" })
      expect(r.trimmed).toBe(0)
      const k = queueKeys("default")
      expect(yield* io(() => zsetOf(c, k.archived))).toEqual([["f-skip", nowSec]])
      const t = yield* io(() => readTask(c, "default", "f-skip"))
      expect(t.fields).toEqual({ state: "archived" })
      expect(t.msg).toMatchObject({
        retried: 0,
        retry: 5,
        errorMsg: "invalid input: skip retry for the task",
        lastFailedAt: nowSec
      })
      // the queue also got one failure from the state-e test above
      expect(yield* io(() => c.mget(k.processedTotal, k.failedTotal))).toEqual(["2", "2"])
      const again = yield* Effect.flip(archive(msg, { errorMsg: "again" }))
      expect(again._tag).toBe("LeaseLost")
    })
  )

  it.effect("archive trims entries older than the max age and beyond the max size, deleting their task hashes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ar"
      const k = queueKeys(q)
      yield* io(async () => {
        await putInZset(c, makeMsg(q, "ancient"), "archived", nowSec - ninetyDays - 5)
        await putInZset(c, makeMsg(q, "at-cutoff"), "archived", nowSec - ninetyDays)
        for (let i = 1; i <= 4; i++) await putInZset(c, makeMsg(q, `old${i}`), "archived", nowSec - 1000 + i)
        await putActive(c, makeMsg(q, "new"), nowSec + 30)
      })
      const r = yield* archive(makeMsg(q, "new"), { errorMsg: "boom", maxSize: 3 })
      expect(r.trimmed).toBe(4)
      expect((yield* io(() => zsetOf(c, k.archived))).map(([id]) => id)).toEqual(["old3", "old4", "new"])
      for (const gone of ["ancient", "at-cutoff", "old1", "old2"])
        expect(yield* io(() => c.exists(k.task(gone)))).toBe(0)
      expect(yield* io(() => c.exists(k.task("old3")))).toBe(1)

      // defaults: 90 days, 10,000 entries
      yield* io(async () => {
        await putInZset(c, makeMsg(q, "stale"), "archived", nowSec - ninetyDays - 1)
        await putActive(c, makeMsg(q, "new2"), nowSec + 30)
      })
      expect((yield* archive(makeMsg(q, "new2"), { errorMsg: "boom" })).trimmed).toBe(1)
      expect((yield* io(() => zsetOf(c, k.archived))).map(([id]) => id)).toEqual(["old3", "old4", "new", "new2"])
    })
  )

  it.effect("names the daily stat keys by the UTC date of the Effect clock", () =>
    Effect.gen(function* () {
      const nextMidnight = (Math.floor(baseNowMs / 86_400_000) + 1) * 86_400_000
      const q = "day"
      const k = queueKeys(q)
      yield* io(async () => {
        await putActive(c, makeMsg(q, "before"), 1)
        await putActive(c, makeMsg(q, "after"), 1)
      })
      yield* TestClock.setTime(nextMidnight - 1000)
      yield* retry(makeMsg(q, "before"), { retryAtMs: nextMidnight, errorMsg: "x", isFailure: true })
      yield* TestClock.setTime(nextMidnight)
      yield* archive(makeMsg(q, "after"), { errorMsg: "y" })
      const day1 = new Date(nextMidnight - 1000).toISOString().slice(0, 10)
      const day2 = new Date(nextMidnight).toISOString().slice(0, 10)
      expect(day1).not.toBe(day2)
      expect(
        yield* io(() =>
          c.mget(
            `asynq:{day}:processed:${day1}`,
            `asynq:{day}:failed:${day1}`,
            `asynq:{day}:processed:${day2}`,
            `asynq:{day}:failed:${day2}`
          )
        )
      ).toEqual(["1", "1", "1", "1"])
      expectNinetyDayTtl(yield* io(() => c.ttl(`asynq:{day}:failed:${day2}`)), nextMidnight / 1000)
      expect(yield* io(() => c.get(k.failedTotal))).toBe("2")
    })
  )
})
