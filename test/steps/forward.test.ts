import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { enqueue } from "../../src/steps/enqueue.js"
import { forward } from "../../src/steps/forward.js"
import { retry } from "../../src/steps/retry.js"
import { forwardChannel, queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putActive,
  putInZset,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"
import { waitFor } from "../support/waitFor.js"

const c = stepsTestDb()
const nsAt = (ms: number) => String(BigInt(ms) * 1_000_000n)

layer(testBrokerLayer())("forward (real Redis)", (it) => {
  it.effect("moves due scheduled and retry tasks to pending, leaves future ones, across queues", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* io(async () => {
        await putInZset(c, makeMsg("fa", "s-due"), "scheduled", nowSec + 60)
        await putInZset(c, makeMsg("fa", "s-later"), "scheduled", nowSec + 600)
        await putInZset(c, makeMsg("fa", "r-due", { retried: 1, errorMsg: "boom" }), "retry", nowSec + 30)
        await putInZset(c, makeMsg("fb", "b-due"), "scheduled", nowSec + 10)
      })
      const early = yield* forward({ queues: ["fa", "fb"] })
      expect(early.moved).toBe(0)
      yield* TestClock.adjust("60 seconds")
      const r = yield* forward({ queues: ["fa", "fb"] })
      expect(r).toEqual({
        moved: 3,
        byQueue: { fa: 2, fb: 1 },
        more: [],
        failedQueues: [],
        nextDueMs: { fa: (nowSec + 600) * 1000 }
      })
      const k = queueKeys("fa")
      expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["r-due", "s-due"])
      expect(yield* io(() => zsetOf(c, k.scheduled))).toEqual([["s-later", nowSec + 600]])
      expect(yield* io(() => c.zcard(k.retry))).toBe(0)
      for (const id of ["s-due", "r-due"]) {
        expect((yield* io(() => readTask(c, "fa", id))).fields).toEqual({
          state: "pending",
          pending_since: nsAt(baseNowMs + 60_000)
        })
      }
      expect((yield* io(() => readTask(c, "fa", "r-due"))).msg).toMatchObject({ retried: 1, errorMsg: "boom" })
    })
  )

  it.effect("puts a due task that belongs to a group back into its group (state aggregating, group listed)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const k = queueKeys("fg")
      yield* io(() => putInZset(c, makeMsg("fg", "g-task", { groupKey: "g1" }), "retry", nowSec - 1, { group: "g1" }))
      const r = yield* forward({ queues: ["fg"] })
      expect(r.moved).toBe(1)
      expect(yield* io(() => zsetOf(c, k.group("g1")))).toEqual([["g-task", nowSec]])
      expect(yield* io(() => c.smembers(k.allGroups))).toEqual(["g1"])
      expect((yield* io(() => readTask(c, "fg", "g-task"))).fields).toEqual({ state: "aggregating", group: "g1" })
      expect(yield* io(() => c.llen(k.pending))).toBe(0)
    })
  )

  it.effect("moves at most `batch` per queue per call and says the queue has more", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const k = queueKeys("fbatch")
      yield* io(async () => {
        for (let i = 0; i < 5; i++) await putInZset(c, makeMsg("fbatch", `s${i}`), "scheduled", nowSec - 10 + i)
        await c.zadd(k.retry, nowSec - 100, "dangling")
      })
      const r1 = yield* forward({ queues: ["fbatch"], batch: 3 })
      expect(r1).toEqual({
        moved: 3,
        byQueue: { fbatch: 3 },
        more: ["fbatch"],
        failedQueues: [],
        nextDueMs: { fbatch: (nowSec - 100) * 1000 }
      })
      expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["s2", "s1", "s0"])
      const r2 = yield* forward({ queues: ["fbatch"], batch: 3 })
      // two scheduled tasks moved; the retry entry without a task hash was only removed
      expect(r2).toEqual({ moved: 2, byQueue: { fbatch: 2 }, more: ["fbatch"], failedQueues: [], nextDueMs: {} })
      expect(yield* io(() => c.zcard(k.retry))).toBe(0)
      expect(yield* io(() => c.exists(k.task("dangling")))).toBe(0)
      const r3 = yield* forward({ queues: ["fbatch"], batch: 3 })
      expect(r3).toEqual({ moved: 0, byQueue: { fbatch: 0 }, more: [], failedQueues: [], nextDueMs: {} })
    })
  )
})

/**
 * Issue 35: due times to the millisecond, asynq's format kept. asynq's scheduled and retry zsets get
 * whole seconds rounded up: Go asynq's Inspector (CLI, asynqmon) parses a score as an integer (a
 * fractional one makes its listing fail), and a Go server forwards when score <= now in whole
 * seconds, so it runs a task due at x.4 s at x+1 s, never early. The exact time is in due_ms.
 */
layer(testBrokerLayer())("forward to the millisecond (real Redis)", (it) => {
  const at = baseNowMs + 10_400 // due at x.4 s
  const k = queueKeys("exact")

  it.effect(
    "a task due at x.4 s moves at that millisecond, not one before; asynq's zset holds x+1 (integer), due_ms the exact time",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        yield* enqueue("t", {}, { queue: "exact", processAt: at, taskId: "x4" })
        const flat = yield* io(() => c.zrange(k.scheduled, "0", "-1", "WITHSCORES"))
        expect(flat).toEqual(["x4", String(nowSec + 11)]) // what Go's Inspector reads: an integer
        expect(yield* io(() => zsetOf(c, k.dueMs))).toEqual([["x4", at]])
        // Go's forwarder takes score <= now (whole seconds): not at x s, at x+1 s.
        expect(yield* io(() => c.zrangebyscore(k.scheduled, "-inf", nowSec + 10))).toEqual([])
        expect(yield* io(() => c.zrangebyscore(k.scheduled, "-inf", nowSec + 11))).toEqual(["x4"])
        yield* TestClock.setTime(at - 1)
        const before = yield* forward({ queues: ["exact"] })
        expect(before).toMatchObject({ moved: 0, nextDueMs: { exact: at } })
        yield* TestClock.setTime(at)
        const r = yield* forward({ queues: ["exact"] })
        expect(r).toEqual({ moved: 1, byQueue: { exact: 1 }, more: [], failedQueues: [], nextDueMs: {} })
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["x4"])
        expect(yield* io(() => c.zcard(k.dueMs))).toBe(0)
        expect((yield* io(() => readTask(c, "exact", "x4"))).fields).toEqual({
          state: "pending",
          pending_since: nsAt(at)
        })
      })
  )

  it.effect("a retry 200 ms after a failure: retry zset in whole seconds rounded up, moved at its millisecond", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs + 900)
      const q = queueKeys("exact-retry")
      yield* io(() => putActive(c, makeMsg("exact-retry", "flaky"), nowSec + 30))
      yield* retry(makeMsg("exact-retry", "flaky"), { errorMsg: "boom", isFailure: true, retryAtMs: baseNowMs + 1100 })
      expect(yield* io(() => c.zrange(q.retry, "0", "-1", "WITHSCORES"))).toEqual(["flaky", String(nowSec + 2)])
      yield* TestClock.setTime(baseNowMs + 1099)
      expect((yield* forward({ queues: ["exact-retry"] })).moved).toBe(0)
      yield* TestClock.setTime(baseNowMs + 1100)
      expect((yield* forward({ queues: ["exact-retry"] })).byQueue).toEqual({ "exact-retry": 1 })
      expect(yield* io(() => c.lrange(q.pending, 0, -1))).toEqual(["flaky"])
    })
  )

  it.effect(
    "an exact entry whose task something else moved (a Go server forwarded it, it went to retry for a later second) is only dropped",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = queueKeys("exact-go")
        yield* enqueue("t", {}, { queue: "exact-go", processAt: at, taskId: "moved-by-go" })
        // A Go server forwarded it at x+1 s (asynq's script: out of scheduled, into pending), ran it,
        // and its failure put it in retry for x+60 s (whole seconds, no exact entry).
        yield* io(async () => {
          await c.zrem(q.scheduled, "moved-by-go")
          await c.zadd(q.retry, nowSec + 60, "moved-by-go")
          await c.hset(q.task("moved-by-go"), "state", "retry")
        })
        yield* TestClock.setTime(at)
        const r = yield* forward({ queues: ["exact-go"] })
        expect(r).toMatchObject({ moved: 0, nextDueMs: { "exact-go": (nowSec + 60) * 1000 } })
        expect(yield* io(() => c.zcard(q.dueMs))).toBe(0)
        expect(yield* io(() => zsetOf(c, q.retry))).toEqual([["moved-by-go", nowSec + 60]])
        yield* TestClock.setTime((nowSec + 60) * 1000)
        expect((yield* forward({ queues: ["exact-go"] })).moved).toBe(1)
      })
  )

  it.effect("a write announces its due time on effect-asynq:forward only when it is the queue's earliest", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const sub = c.duplicate()
      const heard: Array<string> = []
      yield* io(async () => {
        await sub.subscribe(forwardChannel)
        sub.on("message", (_ch, m: string) => {
          if (m.endsWith(" announce") || m.endsWith(" announce-marker")) heard.push(m)
        })
      })
      yield* enqueue("t", {}, { queue: "announce", processIn: 5000, taskId: "a" }) // earliest: announced
      yield* enqueue("t", {}, { queue: "announce", processIn: 9000, taskId: "b" }) // behind a: silent
      yield* enqueue("t", {}, { queue: "announce", processIn: 4000, taskId: "c" }) // earlier than a: announced
      yield* enqueue("t", {}, { queue: "announce-marker", processIn: 1, taskId: "m" }) // its own queue: announced, and last
      yield* io(() =>
        waitFor(
          "the marker",
          () => heard,
          (h) => h.some((m) => m.endsWith(" announce-marker"))
        )
      )
      sub.disconnect()
      expect(heard).toEqual([
        `${baseNowMs + 5000} announce`,
        `${baseNowMs + 4000} announce`,
        `${baseNowMs + 1} announce-marker`
      ])
    })
  )
})
