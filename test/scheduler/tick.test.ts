import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import { schedulerEntries } from "../../src/inspector/scheduler.js"
import { derivedSchedulerId, schedulerTick } from "../../src/scheduler/tick.js"
import { queueKeys } from "../../src/wire/keys.js"
import { readTask, testBrokerLayer, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { at, entry, historyOf, pendingIds, recordOf } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())
const io = <A>(f: () => Promise<A>) => Effect.promise(f)

layer(testBrokerLayer())("schedulerTick (real Redis, TestClock)", (it) => {
  it.effect("enqueues a due occurrence once, in asynq's layout, with history and record", () =>
    Effect.gen(function* () {
      const e = entry({
        spec: "* * * * *",
        type: "report:minute",
        payload: { n: 1 },
        options: { queue: "t1", maxRetry: 3 }
      })
      yield* TestClock.setTime(at("2026-11-22T10:00:20Z"))
      const first = yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      expect(first).toMatchObject({ entries: 1, enqueued: [], alreadyDone: 0, missed: 0, errors: [] })
      expect(first.nextRunAt).toEqual(new Date("2026-11-22T10:01:00Z"))
      expect(yield* io(() => pendingIds(c, "t1"))).toEqual([])

      yield* TestClock.setTime(at("2026-11-22T10:01:00.250Z"))
      const s = yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      expect(s.enqueued).toHaveLength(1)
      const [done] = s.enqueued
      expect(done).toMatchObject({ entryId: e.id, scheduledAt: new Date("2026-11-22T10:01:00Z"), queue: "t1" })
      expect(s.nextRunAt).toEqual(new Date("2026-11-22T10:02:00Z"))

      const ids = yield* io(() => pendingIds(c, "t1"))
      expect(ids).toEqual([done!.taskId])
      const task = yield* io(() => readTask(c, "t1", done!.taskId))
      expect(task.fields).toEqual({
        state: "pending",
        pending_since: String(at("2026-11-22T10:01:00.250Z") * 1_000_000)
      })
      expect(task.msg).toMatchObject({
        type: "report:minute",
        id: done!.taskId,
        queue: "t1",
        retry: 3,
        timeout: 1800,
        deadline: 0,
        uniqueKey: ""
      })
      expect(Buffer.from(task.msg!.payload!).toString()).toBe('{"n":1}')
      expect(yield* io(() => c.smembers("asynq:queues"))).toContain("t1")

      expect(yield* io(() => historyOf(c, e.id))).toEqual([
        { taskId: done!.taskId, enqueuedAtMs: at("2026-11-22T10:01:00.250Z"), score: at("2026-11-22T10:01:00Z") / 1000 }
      ])
      expect(yield* io(() => recordOf(c, e))).toEqual({
        through: String(at("2026-11-22T10:01:00Z")),
        prev: String(at("2026-11-22T10:01:00Z")),
        task: done!.taskId
      })

      // the same minute again (a second tick, an overlapping invocation): nothing new
      yield* TestClock.setTime(at("2026-11-22T10:01:40Z"))
      const again = yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      expect(again.enqueued).toEqual([])
      expect(yield* io(() => pendingIds(c, "t1"))).toHaveLength(1)
    })
  )

  it.effect(
    "publishes the entries in asynq:schedulers (asynq's tools list a cron function's entries), under an id stable across invocations",
    () =>
      Effect.gen(function* () {
        const a = entry({ spec: "*/5 * * * *", type: "pub:a", options: { queue: "tpub" } })
        const b = entry({ spec: "@every 1h", type: "pub:b", options: { queue: "tpub" } })
        yield* TestClock.setTime(at("2026-11-22T13:00:30Z"))
        yield* schedulerTick({ entries: [a, b] })
        const id = derivedSchedulerId([b, a])
        expect(id).toBe(derivedSchedulerId([a, b]))
        expect(id).toMatch(/^cron-[0-9a-f]{12}$/)
        const listed = yield* schedulerEntries()
        expect(
          listed.filter((e) => e.id === a.id || e.id === b.id).map((e) => [e.spec, e.taskType, e.next.toISOString()])
        ).toEqual([
          ["*/5 * * * *", "pub:a", "2026-11-22T13:05:00.000Z"],
          ["@every 1h", "pub:b", "2026-11-22T14:00:00.000Z"]
        ])
        const key = `asynq:schedulers:{${id}}`
        expect(yield* io(() => c.pttl(key))).toBeGreaterThan(170_000)
        // publishAs: false (the long-lived Scheduler's own ticks) writes no listing
        const other = entry({ spec: "@every 2h", type: "pub:c", options: { queue: "tpub" } })
        yield* schedulerTick({ entries: [other], publishAs: false })
        expect(yield* io(() => c.exists(`asynq:schedulers:{${derivedSchedulerId([other])}}`))).toBe(0)
      })
  )

  it.effect("catch-up after missed minutes: the latest occurrence by default, up to maxCatchUp in order", () =>
    Effect.gen(function* () {
      const one = entry({ spec: "* * * * *", type: "catch:one", options: { queue: "t2" } })
      const many = entry({ spec: "* * * * *", type: "catch:many", options: { queue: "t2" } })
      yield* TestClock.setTime(at("2026-11-22T11:00:30Z"))
      yield* schedulerTick({ entries: [one], lookbackMs: 0 })
      yield* schedulerTick({ entries: [many], lookbackMs: 0, maxCatchUp: 5 })
      // nobody ticked at 11:01, 11:02, 11:03
      yield* TestClock.setTime(at("2026-11-22T11:03:10Z"))
      const a = yield* schedulerTick({ entries: [one], lookbackMs: 0 })
      expect(a.enqueued.map((x) => x.scheduledAt.toISOString())).toEqual(["2026-11-22T11:03:00.000Z"])
      expect(a.missed).toBe(2)
      const b = yield* schedulerTick({ entries: [many], lookbackMs: 0, maxCatchUp: 5 })
      expect(b.enqueued.map((x) => x.scheduledAt.toISOString())).toEqual([
        "2026-11-22T11:01:00.000Z",
        "2026-11-22T11:02:00.000Z",
        "2026-11-22T11:03:00.000Z"
      ])
      expect(b.missed).toBe(0)
      // pending list order = enqueue order (the worker pops the oldest first)
      const ids = yield* io(() => pendingIds(c, "t2"))
      expect(ids).toEqual([...a.enqueued, ...b.enqueued].map((x) => x.taskId))
    })
  )

  it.effect(
    "across DST changes, minute by minute on TestClock: 02:30 New York runs once at 03:30 EDT on spring-forward day; 02:30 Berlin once on fall-back day",
    () =>
      Effect.gen(function* () {
        const ny = entry({ spec: "30 2 * * *", type: "dst:ny", options: { queue: "tdst" } }, "America/New_York")
        const berlin = entry({
          spec: "CRON_TZ=Europe/Berlin 30 2 * * *",
          type: "dst:berlin",
          options: { queue: "tdst" }
        })
        const runMinutes = (fromIso: string, minutes: number, e: typeof ny) =>
          Effect.gen(function* () {
            const out: Array<string> = []
            for (let m = 0; m < minutes; m++) {
              yield* TestClock.setTime(at(fromIso) + m * 60_000 + 5_000) // a tick 5 s after each minute
              const s = yield* schedulerTick({ entries: [e], lookbackMs: 0 })
              out.push(...s.enqueued.map((x) => x.scheduledAt.toISOString()))
            }
            return out
          })
        // 2026-03-08, New York: 02:00 EST jumps to 03:00 EDT (UTC 07:00). Tick every minute 06:00–08:00 UTC.
        expect(yield* runMinutes("2026-03-08T06:00:00Z", 120, ny)).toEqual(["2026-03-08T07:30:00.000Z"])
        // 2026-10-25, Berlin: 03:00 CEST falls back to 02:00 CET (UTC 01:00); wall-clock 02:30 comes at
        // 00:30 and again at 01:30 UTC. Tick every minute 23:45–01:45 UTC.
        expect(yield* runMinutes("2026-10-24T23:45:00Z", 120, berlin)).toEqual(["2026-10-25T00:30:00.000Z"])
        expect(yield* io(() => historyOf(c, ny.id))).toHaveLength(1)
        expect(yield* io(() => historyOf(c, berlin.id))).toHaveLength(1)
      }),
    120_000 // 240 ticks, each a few Redis round trips: well over 30 s on a loaded 2-core machine
  )

  it.effect("a new entry: occurrences within lookbackMs (default 60 s) count as due on the first tick", () =>
    Effect.gen(function* () {
      const e = entry({ spec: "0 12 * * *", type: "noon", options: { queue: "t3" } })
      yield* TestClock.setTime(at("2026-11-22T12:00:00.800Z"))
      const s = yield* schedulerTick({ entries: [e] })
      expect(s.enqueued.map((x) => x.scheduledAt.toISOString())).toEqual(["2026-11-22T12:00:00.000Z"])
      const late = entry({ spec: "0 12 * * *", type: "noon-late", options: { queue: "t3" } })
      yield* TestClock.setTime(at("2026-11-22T12:01:00.001Z"))
      expect((yield* schedulerTick({ entries: [late] })).enqueued).toEqual([])
    })
  )

  it.effect(
    "processIn → scheduled, group → aggregating, unique → one task while locked (the occurrence still counts)",
    () =>
      Effect.gen(function* () {
        const q = "t4"
        const k = queueKeys(q)
        const later = entry({ spec: "@every 1m", type: "later", options: { queue: q, processIn: 300_000 } })
        const grouped = entry({ spec: "@every 1m", type: "grouped", options: { queue: q, group: "g1" } })
        const unique = entry({
          spec: "@every 1m",
          type: "uniq",
          payload: "p",
          options: { queue: q, unique: 3_600_000 }
        })
        const all = [later, grouped, unique]
        yield* TestClock.setTime(at("2026-11-22T13:00:30Z"))
        yield* schedulerTick({ entries: all, lookbackMs: 0 })
        yield* TestClock.setTime(at("2026-11-22T13:01:05Z"))
        const s1 = yield* schedulerTick({ entries: all, lookbackMs: 0 })
        expect(s1.enqueued).toHaveLength(3)
        const idOf = (e: typeof later) => s1.enqueued.find((x) => x.entryId === e.id)!.taskId
        expect(yield* io(() => zsetOf(c, k.scheduled))).toEqual([[idOf(later), at("2026-11-22T13:06:05Z") / 1000]])
        expect((yield* io(() => readTask(c, q, idOf(later)))).fields).toEqual({ state: "scheduled" })
        expect(yield* io(() => zsetOf(c, k.group("g1")))).toEqual([[idOf(grouped), at("2026-11-22T13:01:05Z") / 1000]])
        expect((yield* io(() => readTask(c, q, idOf(grouped)))).fields).toEqual({ state: "aggregating", group: "g1" })
        expect(yield* io(() => c.smembers(k.allGroups))).toEqual(["g1"])
        const u = yield* io(() => readTask(c, q, idOf(unique)))
        expect(u.fields.unique_key).toBe(u.msg!.uniqueKey)
        expect(yield* io(() => c.get(u.msg!.uniqueKey))).toBe(idOf(unique))
        expect(yield* io(() => c.pttl(u.msg!.uniqueKey))).toBeGreaterThan(3_590_000)

        const seen: Array<string> = []
        yield* TestClock.setTime(at("2026-11-22T13:02:01Z"))
        const s2 = yield* schedulerTick({
          entries: all,
          lookbackMs: 0,
          hooks: { postEnqueue: (r) => Effect.sync(() => void seen.push(`${r.entry.type}:${r.outcome}`)) }
        })
        expect(s2.enqueued.map((x) => x.entryId).sort()).toEqual([later.id, grouped.id].sort())
        expect(s2.refused).toBe(1)
        expect(seen.sort()).toEqual(["grouped:enqueued", "later:enqueued", "uniq:duplicate"])
        expect((yield* io(() => recordOf(c, unique))).through).toBe(String(at("2026-11-22T13:02:00Z")))
        expect((yield* io(() => historyOf(c, unique.id))).map((h) => h.taskId)).toEqual([idOf(unique)])
        // a third instance arriving late does not retry the refused occurrence
        const s3 = yield* schedulerTick({ entries: [unique], lookbackMs: 0 })
        expect(s3).toMatchObject({ enqueued: [], refused: 0 })
      })
  )

  it.effect("preEnqueue can veto an occurrence on this instance; postEnqueue sees the task", () =>
    Effect.gen(function* () {
      const e = entry({ spec: "@every 30s", type: "hooked", options: { queue: "t5" } })
      yield* TestClock.setTime(at("2026-11-22T14:00:10Z"))
      yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      yield* TestClock.setTime(at("2026-11-22T14:00:31Z"))
      const vetoed = yield* schedulerTick({
        entries: [e],
        lookbackMs: 0,
        hooks: { preEnqueue: () => Effect.fail("maintenance window") }
      })
      expect(vetoed).toMatchObject({ enqueued: [], vetoed: 1 })
      expect(yield* io(() => pendingIds(c, "t5"))).toEqual([])
      const tasks: Array<string> = []
      const attempts: Array<string> = []
      const ok = yield* schedulerTick({
        entries: [e],
        lookbackMs: 0,
        hooks: {
          preEnqueue: (a) => Effect.sync(() => void attempts.push(a.scheduledAt.toISOString())),
          postEnqueue: (r) => Effect.sync(() => void (r.outcome === "enqueued" && tasks.push(r.task.id)))
        }
      })
      expect(attempts).toEqual(["2026-11-22T14:00:30.000Z"])
      expect(tasks).toEqual(ok.enqueued.map((x) => x.taskId))
      expect(tasks).toHaveLength(1)
    })
  )

  it.effect("history keeps the newest 1,000 events", () =>
    Effect.gen(function* () {
      const e = entry({ spec: "@every 10s", type: "hist", options: { queue: "t6" } })
      const key = `asynq:scheduler_history:${e.id}`
      const base = at("2026-11-22T15:00:00Z") / 1000 - 100_000
      yield* io(async () => {
        const args: Array<string | number> = []
        for (let i = 0; i < 1000; i++) args.push(base + i, `old-${String(i).padStart(4, "0")}`)
        await c.zadd(key, ...args)
      })
      yield* TestClock.setTime(at("2026-11-22T15:00:05Z"))
      yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      yield* TestClock.setTime(at("2026-11-22T15:00:10Z"))
      const s = yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      expect(s.enqueued).toHaveLength(1)
      expect(yield* io(() => c.zcard(key))).toBe(1000)
      const members = yield* io(() => c.zrange(key, "0", "-1"))
      expect(members[0]).toBe("old-0001") // the oldest one went
      const newest = yield* io(() => c.zrangeBuffer(key, "-1", "-1", "WITHSCORES"))
      expect(Number(newest[1]!.toString())).toBe(at("2026-11-22T15:00:10Z") / 1000)
    })
  )

  it.effect("a pending task wakes idle workers (effect-asynq:wake), as enqueue does", () =>
    Effect.gen(function* () {
      const sub = rawClient()
      const got: Array<string> = []
      yield* io(async () => {
        sub.on("message", (channel: string, q: string) => void got.push(`${channel} ${q}`))
        await sub.subscribe("effect-asynq:wake")
      })
      const e = entry({ spec: "@every 1m", type: "wake", options: { queue: "t7" } })
      yield* TestClock.setTime(at("2026-11-22T16:00:30Z"))
      yield* schedulerTick({ entries: [e], lookbackMs: 0 })
      yield* TestClock.setTime(at("2026-11-22T16:01:00Z"))
      expect((yield* schedulerTick({ entries: [e], lookbackMs: 0 })).enqueued).toHaveLength(1)
      // Redis delivers a subscriber's messages in publish order: once this marker arrives, every
      // wake-up published before it has arrived too.
      yield* io(async () => {
        await c.publish("effect-asynq:wake", "marker-t7")
        await waitFor(
          "the marker after the wake-up",
          () => got,
          (g) => g.includes("effect-asynq:wake marker-t7")
        )
      })
      // Pub/sub is server-wide: keep only this test's queue.
      expect(got.filter((m) => m.endsWith(" t7"))).toEqual(["effect-asynq:wake t7"])
      sub.disconnect()
    })
  )

  it.effect(
    "a generated task id that is taken is replaced (the occurrence is not lost); a taken custom id skips it",
    () =>
      Effect.gen(function* () {
        yield* io(() => c.hset(queueKeys("tid").task("taken"), "state", "pending", "msg", "x"))
        const e = entry({ spec: "* * * * *", type: "report:minute", options: { queue: "tid" } })
        yield* TestClock.setTime(at("2026-11-22T11:00:00.100Z"))
        const ids = ["taken", "taken", "fresh"]
        const s = yield* schedulerTick({ entries: [e], lookbackMs: 60_000 }, () => ids.shift() ?? "exhausted")
        expect(s.errors).toEqual([])
        expect(s).toMatchObject({ refused: 0, alreadyDone: 0, missed: 0 })
        expect(s.enqueued.map((x) => x.taskId)).toEqual(["fresh"])
        expect(yield* io(() => pendingIds(c, "tid"))).toEqual(["fresh"])
        expect(yield* io(() => c.hget(queueKeys("tid").task("taken"), "msg"))).toBe("x")
        expect((yield* io(() => recordOf(c, e))).task).toBe("fresh")

        const custom = entry({ spec: "* * * * *", type: "report:custom", options: { queue: "tid", taskId: "taken" } })
        const s2 = yield* schedulerTick({ entries: [custom], lookbackMs: 60_000 })
        expect(s2.enqueued).toEqual([])
        expect(s2.refused).toBe(1)
        expect((yield* io(() => recordOf(c, custom))).through).toBe(String(at("2026-11-22T11:00:00Z")))
      })
  )

  it.effect("an invalid config fails the tick with a typed error and writes nothing", () =>
    Effect.gen(function* () {
      const before = yield* io(() => c.dbsize())
      const bad = yield* Effect.flip(schedulerTick({ entries: [{ spec: "*/61 * * * *", type: "x" }] }))
      expect(bad._tag).toBe("InvalidCronSpec")
      expect(bad.message).toContain('invalid cron spec "*/61 * * * *"')
      const zone = yield* Effect.flip(
        schedulerTick({ entries: [{ spec: "@daily", type: "x", timeZone: "Europe/Atlantis" }] })
      )
      expect(zone._tag).toBe("InvalidTimeZone")
      const opt = yield* Effect.flip(
        schedulerTick({ entries: [{ spec: "@daily", type: "x", options: { maxRetry: -1 } }] })
      )
      expect(opt).toMatchObject({ _tag: "InvalidArgument", field: "maxRetry" })
      expect(yield* io(() => c.dbsize())).toBe(before)
    })
  )
})
