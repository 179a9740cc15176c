import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import { schedulerEntries } from "../../src/inspector/scheduler.js"
import { makeScheduler } from "../../src/scheduler/Scheduler.js"
import { decodeSchedulerEntry } from "../../src/wire/SchedulerEntry.js"
import { goZeroTime } from "../../src/wire/Timestamp.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { at, historyOf, pendingIds } from "./support.js"
import { waitForEffect } from "../support/waitFor.js"
import { realPause } from "./support-live.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())
const io = <A>(f: () => Promise<A>) => Effect.promise(f)
const typesIn = (q: string) =>
  io(async () => {
    const ids = await pendingIds(c, q)
    const out: Array<string> = []
    for (const id of ids)
      out.push((await c.hget(`asynq:{${q}}:t:${id}`, "msg"))!.includes("every-30s") ? "every-30s" : "cron")
    return out
  })

layer(testBrokerLayer())("long-lived Scheduler (real Redis, TestClock)", (it) => {
  it.effect("runs entries when due, publishes them like asynq, stops on unregister, withdraws on shutdown", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(at("2026-11-22T10:00:20Z"))
      const key = "asynq:schedulers:{test-scheduler-1}"
      yield* Effect.scoped(
        Effect.gen(function* () {
          const s = yield* makeScheduler({ id: "test-scheduler-1" })
          const cron = yield* s.register({
            spec: "*/2 * * * *",
            type: "cron",
            options: { queue: "l1", maxRetry: 3, timeout: 1_800_000 }
          })
          const every = yield* s.register({
            spec: "@every 30s",
            type: "every-30s",
            payload: { src: "every30s" },
            options: { queue: "l1" }
          })
          expect(
            yield* s
              .register({
                spec: "@every 30s",
                type: "every-30s",
                payload: { src: "every30s" },
                options: { queue: "l1" }
              })
              .pipe(Effect.flip)
          ).toMatchObject({ _tag: "DuplicateEntry", entryId: every })

          yield* realPause(50)
          expect(yield* typesIn("l1")).toEqual([])
          yield* TestClock.adjust("10 seconds") // 10:00:30
          expect(yield* waitForEffect("the first @every enqueue in l1", typesIn("l1"), (t) => t.length === 1)).toEqual([
            "every-30s"
          ])

          // published entries (heartbeat at 10:00:30): asynq's layout, head = the entry due last
          // (published by the heartbeat and again right after the enqueue, so wait for the latter)
          const decoded = yield* waitForEffect(
            "both entries published, the @every one with its enqueue",
            io(async () => (await c.lrangeBuffer(key, 0, -1)).map((b) => decodeSchedulerEntry(b))),
            (l) => l.length === 2 && l[1]!.prevEnqueueTime.seconds > 0
          )
          expect(decoded.map((d) => [d.id, d.spec, d.taskType, d.enqueueOptions])).toEqual([
            [cron, "*/2 * * * *", "cron", ['Queue("l1")', "MaxRetry(3)", "Timeout(30m0s)"]],
            [every, "@every 30s", "every-30s", ['Queue("l1")']]
          ])
          expect(decoded[0]!.nextEnqueueTime).toEqual({ seconds: at("2026-11-22T10:02:00Z") / 1000, nanos: 0 })
          expect(decoded[0]!.prevEnqueueTime).toEqual(goZeroTime)
          expect(decoded[1]!.nextEnqueueTime).toEqual({ seconds: at("2026-11-22T10:01:00Z") / 1000, nanos: 0 })
          expect(decoded[1]!.prevEnqueueTime).toEqual({ seconds: at("2026-11-22T10:00:30Z") / 1000, nanos: 0 })
          expect(Buffer.from(decoded[1]!.taskPayload!).toString()).toBe('{"src":"every30s"}')
          expect(yield* io(() => c.pttl(key))).toBeGreaterThan(19_000)
          expect(yield* io(() => c.zscore("asynq:schedulers", key))).toBe(String(at("2026-11-22T10:00:50Z") / 1000))
          // the inspector (asynq's SchedulerEntries) reads them back, soonest first
          expect((yield* schedulerEntries()).map((e) => [e.id, e.next.toISOString(), e.prev?.toISOString()])).toEqual([
            [every, "2026-11-22T10:01:00.000Z", "2026-11-22T10:00:30.000Z"],
            [cron, "2026-11-22T10:02:00.000Z", undefined]
          ])

          const step = (n: number) =>
            TestClock.adjust("30 seconds").pipe(
              Effect.andThen(waitForEffect(`${n} tasks in l1`, typesIn("l1"), (t) => t.length === n))
            )
          yield* step(2) // 10:01:00
          yield* step(3) // 10:01:30
          const t = yield* step(5) // 10:02:00: both
          expect(t.slice(3).sort()).toEqual(["cron", "every-30s"])
          expect((yield* io(() => historyOf(c, cron))).length).toBe(1)
          expect((yield* io(() => historyOf(c, every))).length).toBe(4)

          yield* s.unregister(cron)
          expect((yield* s.unregister(cron).pipe(Effect.flip))._tag).toBe("EntryNotFound")
          expect((yield* s.entries).map((e) => e.id)).toEqual([every])
          for (let n = 6; n <= 9; n++) yield* step(n) // to 10:04:00: only @every runs
          yield* realPause(100)
          const types = yield* typesIn("l1")
          expect(types.filter((x) => x === "cron")).toHaveLength(1)
          expect(types.filter((x) => x === "every-30s")).toHaveLength(8)
          expect((yield* s.lastTick)?.at).toEqual(new Date("2026-11-22T10:04:00Z"))
        })
      )
      // shutdown: entries key and zset member gone
      expect(yield* io(() => c.exists(key))).toBe(0)
      expect(yield* io(() => c.zscore("asynq:schedulers", key))).toBeNull()
    })
  )

  it.effect("three instances started together, each on its own connection, enqueue every occurrence exactly once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(at("2026-11-22T11:00:20Z"))
      const entries = [
        { spec: "@every 30s", type: "every-30s", options: { queue: "l3" } },
        { spec: "* * * * *", type: "cron", options: { queue: "l3" } }
      ] as const
      yield* Effect.scoped(
        Effect.gen(function* () {
          const schedulers = yield* Effect.all(
            ["multi-a", "multi-b", "multi-c"].map((id) =>
              makeScheduler({ id }).pipe(Effect.provide(testBrokerLayer()))
            ),
            { concurrency: "unbounded" }
          )
          const ids = yield* Effect.forEach(schedulers, (s) => Effect.forEach(entries, (e) => s.register(e)))
          // The same entry has the same id on every instance: that is what makes them one.
          expect(new Set(ids.map((x) => x.join()))).toEqual(new Set([ids[0]!.join()]))
          // 11:00:30 … 11:03:00 in 30 s steps: six @every occurrences, three minute marks.
          const expectedAfter = [1, 3, 4, 6, 7, 9]
          for (const n of expectedAfter) {
            yield* TestClock.adjust("30 seconds")
            yield* waitForEffect(`${n} tasks in l3`, typesIn("l3"), (t) => t.length >= n)
          }
          yield* realPause(200) // give a slow instance the chance to enqueue a duplicate
          const types = yield* typesIn("l3")
          expect(types.filter((x) => x === "every-30s")).toHaveLength(6)
          expect(types.filter((x) => x === "cron")).toHaveLength(3)
          const [every, cron] = ids[0]!
          expect((yield* io(() => historyOf(c, every!))).length).toBe(6)
          expect((yield* io(() => historyOf(c, cron!))).length).toBe(3)
        })
      )
    })
  )
})
