import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { forward } from "../../src/steps/forward.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, makeMsg, putInZset, readTask, testBrokerLayer, zsetOf, stepsTestDb, io, baseNowSec as nowSec } from "../support/arrange.js"

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
      expect(r).toEqual({ moved: 3, byQueue: { fa: 2, fb: 1 }, more: [], failedQueues: [], nextDueMs: { fa: (nowSec + 600) * 1000 } })
      const k = queueKeys("fa")
      expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["r-due", "s-due"])
      expect(yield* io(() => zsetOf(c, k.scheduled))).toEqual([["s-later", nowSec + 600]])
      expect(yield* io(() => c.zcard(k.retry))).toBe(0)
      for (const id of ["s-due", "r-due"]) {
        expect((yield* io(() => readTask(c, "fa", id))).fields).toEqual({ state: "pending", pending_since: nsAt(baseNowMs + 60_000) })
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
      expect(r1).toEqual({ moved: 3, byQueue: { fbatch: 3 }, more: ["fbatch"], failedQueues: [], nextDueMs: { fbatch: (nowSec - 100) * 1000 } })
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
