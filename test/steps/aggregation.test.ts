import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { aggregate } from "../../src/steps/aggregate.js"
import { deleteAggregationSet, readAggregationSet } from "../../src/steps/aggregationSet.js"
import { checkGroups } from "../../src/steps/checkGroups.js"
import { reclaimStaleAggregationSets } from "../../src/steps/reclaimStaleAggregationSets.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  baseNowMs,
  makeMsg,
  putGrouped,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"

const c = stepsTestDb()

layer(testBrokerLayer())("aggregation (real Redis)", (it) => {
  it.effect("grace period: a group becomes a set once its newest task is gracePeriod old", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ag1"
      const k = queueKeys(q)
      yield* io(async () => {
        await putGrouped(c, makeMsg(q, "a"), "g1", nowSec - 30)
        await putGrouped(c, makeMsg(q, "b"), "g1", nowSec)
      })
      const rule = { queue: q, gracePeriodMs: 60_000, maxDelayMs: 0, maxSize: 0 }
      yield* TestClock.adjust("59 seconds")
      expect((yield* checkGroups(rule)).sets).toEqual([])
      yield* TestClock.adjust("1 second")
      const { sets } = yield* checkGroups(rule)
      expect(sets.map((s) => [s.group, s.size])).toEqual([["g1", 2]])
      const setKey = k.aggregationSet("g1", sets[0]!.setId)
      expect(yield* io(() => zsetOf(c, setKey))).toEqual([
        ["a", nowSec - 30],
        ["b", nowSec]
      ])
      expect(yield* io(() => zsetOf(c, k.allAggregationSets))).toEqual([[setKey, nowSec + 60 + 120]])
      expect(yield* io(() => c.exists(k.group("g1")))).toBe(0)
      expect(yield* io(() => c.smembers(k.allGroups))).toEqual([])

      const content = yield* readAggregationSet({ queue: q, group: "g1", setId: sets[0]!.setId })
      expect(content.msgs.map((m) => m.id)).toEqual(["a", "b"])
      expect(content.msgs[0]!.groupKey).toBe("g1")
      expect(content.deadlineMs).toBe((nowSec + 180) * 1000)
      expect(content.corrupt).toEqual([])

      expect(yield* deleteAggregationSet({ queue: q, group: "g1", setId: sets[0]!.setId })).toEqual({ deleted: 2 })
      expect(yield* io(() => c.exists(setKey, k.task("a"), k.task("b"), k.allAggregationSets))).toBe(0)
      const gone = yield* Effect.flip(readAggregationSet({ queue: q, group: "g1", setId: sets[0]!.setId }))
      expect(gone._tag).toBe("InvalidState")
      expect(gone.message).toContain("does not exist")
    })
  )

  it.effect("max delay: a group that keeps growing is cut once its oldest task is maxDelay old", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ag2"
      yield* io(async () => {
        await putGrouped(c, makeMsg(q, "t0"), "g", nowSec)
        await putGrouped(c, makeMsg(q, "t1"), "g", nowSec + 50)
        await putGrouped(c, makeMsg(q, "t2"), "g", nowSec + 100)
      })
      const rule = { queue: q, gracePeriodMs: 60_000, maxDelayMs: 120_000, maxSize: 0 }
      yield* TestClock.adjust("119 seconds")
      expect((yield* checkGroups(rule)).sets).toEqual([])
      yield* TestClock.adjust("1 second")
      expect((yield* checkGroups(rule)).sets.map((s) => s.size)).toEqual([3])
    })
  )

  it.effect("max size: a full group yields a set of its maxSize oldest tasks; the rest stay grouped", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ag3"
      const k = queueKeys(q)
      yield* io(async () => {
        for (let i = 0; i < 5; i++) await putGrouped(c, makeMsg(q, `m${i}`), "big", nowSec + i)
        await putGrouped(c, makeMsg(q, "other"), "small", nowSec)
      })
      const rule = { queue: q, gracePeriodMs: 3_600_000, maxDelayMs: 0, maxSize: 3 }
      const first = yield* checkGroups(rule)
      expect(first.sets.map((s) => [s.group, s.size])).toEqual([["big", 3]])
      const read = yield* readAggregationSet({ queue: q, group: "big", setId: first.sets[0]!.setId })
      expect(read.msgs.map((m) => m.id)).toEqual(["m0", "m1", "m2"])
      expect(yield* io(() => c.zrange(k.group("big"), "0", "-1"))).toEqual(["m3", "m4"])
      expect((yield* io(() => c.smembers(k.allGroups))).sort()).toEqual(["big", "small"])
      expect((yield* checkGroups(rule)).sets).toEqual([])
    })
  )

  it.effect("a corrupt member is archived out of the set and reported; the others are returned", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ag4"
      const k = queueKeys(q)
      yield* io(async () => {
        await putGrouped(c, makeMsg(q, "ok"), "g", nowSec - 100)
        await c.hset(k.task("bad"), "msg", Buffer.from([0xff, 0x01]), "state", "aggregating", "group", "g")
        await c.zadd(k.group("g"), nowSec - 99, "bad")
      })
      const { sets } = yield* checkGroups({ queue: q, gracePeriodMs: 10_000, maxDelayMs: 0, maxSize: 0 })
      const read = yield* readAggregationSet({ queue: q, group: "g", setId: sets[0]!.setId })
      expect(read.msgs.map((m) => m.id)).toEqual(["ok"])
      expect(read.corrupt.map((x) => [x.id, x.outcome])).toEqual([["bad", "archived"]])
      expect(yield* io(() => c.zrange(k.aggregationSet("g", sets[0]!.setId), "0", "-1"))).toEqual(["ok"])
      expect(yield* io(() => c.zrange(k.archived, "0", "-1"))).toEqual(["bad"])
      expect(yield* deleteAggregationSet({ queue: q, group: "g", setId: sets[0]!.setId })).toEqual({ deleted: 1 })
      expect(yield* io(() => c.hget(k.task("bad"), "state"))).toBe("archived")
    })
  )

  it.effect("a set not deleted by its deadline is reclaimed back into its group with the original scores", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "ag5"
      const k = queueKeys(q)
      yield* io(async () => {
        await putGrouped(c, makeMsg(q, "p"), "grp:with:colons", nowSec - 500)
        await putGrouped(c, makeMsg(q, "r"), "grp:with:colons", nowSec - 400)
      })
      const { sets } = yield* checkGroups({
        queue: q,
        gracePeriodMs: 60_000,
        maxDelayMs: 0,
        maxSize: 0,
        aggregationTimeoutMs: 30_000
      })
      expect(sets.length).toBe(1)
      yield* TestClock.adjust("29 seconds")
      expect(yield* reclaimStaleAggregationSets({ queue: q })).toEqual({ reclaimed: 0, tasks: 0 })
      yield* TestClock.adjust("1 second")
      expect(yield* reclaimStaleAggregationSets({ queue: q })).toEqual({ reclaimed: 1, tasks: 2 })
      expect(yield* io(() => zsetOf(c, k.group("grp:with:colons")))).toEqual([
        ["p", nowSec - 500],
        ["r", nowSec - 400]
      ])
      expect(yield* io(() => c.smembers(k.allGroups))).toEqual(["grp:with:colons"])
      expect(yield* io(() => c.exists(k.allAggregationSets, k.aggregationSet("grp:with:colons", sets[0]!.setId)))).toBe(
        0
      )
      // and it is aggregated again by the next check
      expect(
        (yield* checkGroups({ queue: q, gracePeriodMs: 60_000, maxDelayMs: 0, maxSize: 0 })).sets.map((s) => s.size)
      ).toEqual([2])
    })
  )

  it.effect(
    "aggregate: each ready group becomes one task in the group's queue; a throwing aggregator loses nothing",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "ag7"
        const k = queueKeys(q)
        yield* io(async () => {
          await putGrouped(c, makeMsg(q, "x1"), "good", nowSec - 100)
          await putGrouped(c, makeMsg(q, "x2"), "good", nowSec - 90)
          await putGrouped(c, makeMsg(q, "y1"), "bad", nowSec - 100)
        })
        const seen: Array<string> = []
        const aggregator = (group: string, tasks: ReadonlyArray<{ readonly id: string }>) => {
          seen.push(`${group}:${tasks.map((t) => t.id).join(",")}`)
          if (group === "bad") throw new Error("cannot combine")
          return { type: "digest", payload: { n: tasks.length }, options: { maxRetry: 3 } }
        }
        const r = yield* aggregate({ queue: q, aggregator, gracePeriodMs: 60_000 })
        expect(r.reclaimed).toBe(0)
        expect(r.enqueued).toBe(1)
        expect(r.tasks).toBe(2)
        expect(r.failed).toEqual([
          { group: "bad", error: 'aggregator failed for group "bad" of queue "ag7": cannot combine' }
        ])
        expect(seen.sort()).toEqual(["bad:y1", "good:x1,x2"])
        const pending = yield* io(() => c.lrange(k.pending, 0, -1))
        expect(pending.length).toBe(1)
        const made = yield* io(() => c.hget(k.task(pending[0]!), "state"))
        expect(made).toBe("pending")
        expect(yield* io(() => c.exists(k.task("x1"), k.task("x2")))).toBe(0)
        // the failed group's task is held in its set until the set's deadline (2 min), then comes back and is aggregated again
        expect(yield* io(() => c.exists(k.task("y1")))).toBe(1)
        yield* TestClock.adjust("121 seconds")
        const again = yield* aggregate({
          queue: q,
          aggregator: (group, tasks) => ({ type: "digest", payload: { group, n: tasks.length } })
        })
        expect(again).toEqual({ reclaimed: 1, enqueued: 1, tasks: 1, failed: [] })
        expect(yield* io(() => c.llen(k.pending))).toBe(2)
        expect(yield* io(() => c.exists(k.task("y1"), k.allAggregationSets, k.allGroups))).toBe(0)
      })
  )

  it.effect(
    "maxGroups bounds one call: at most that many groups are checked, and successive calls reach every group",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "ag8"
        yield* io(async () => {
          for (let g = 0; g < 7; g++) await putGrouped(c, makeMsg(q, `m${g}`), `g${g}`, nowSec - 100)
        })
        const aggregator = (group: string) => ({ type: "digest", payload: { group } })
        const calls: Array<number> = []
        for (let i = 0; i < 50 && calls.reduce((a, b) => a + b, 0) < 7; i++) {
          calls.push((yield* aggregate({ queue: q, aggregator, gracePeriodMs: 60_000, maxGroups: 3 })).enqueued)
        }
        expect(calls.every((n) => n <= 3)).toBe(true)
        expect(calls[0]).toBe(3)
        expect(calls.reduce((a, b) => a + b, 0)).toBe(7)
        expect(yield* io(() => c.llen(queueKeys(q).pending))).toBe(7)
        expect(yield* io(() => c.exists(queueKeys(q).allGroups))).toBe(0)
        const e = yield* Effect.flip(
          checkGroups({ queue: q, gracePeriodMs: 1000, maxDelayMs: 0, maxSize: 0, maxGroups: 0 })
        )
        expect(e.message).toBe("maxGroups must be a whole number >= 1, got 0")
      })
  )

  it.effect("rejects a negative or fractional maxSize with InvalidArgument", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(checkGroups({ queue: "ag6", gracePeriodMs: 1000, maxDelayMs: 0, maxSize: 1.5 }))
      expect(e._tag).toBe("InvalidArgument")
      expect(e.message).toBe("maxSize must be a whole number >= 0, got 1.5")
    })
  )
})
