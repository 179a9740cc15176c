import { expect, layer } from "@effect/vitest"
import { type Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll } from "vitest"
import type { PeriodicTaskConfig } from "../../src/scheduler/PeriodicTaskManager.js"
import { makePeriodicTaskManager } from "../../src/scheduler/PeriodicTaskManager.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { at, pendingIds } from "./support.js"
import { waitForEffect } from "../support/waitFor.js"
import { realPause } from "./support-live.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())
const io = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Task types in the pending list of `q`, oldest first. */
const typesIn = (q: string) =>
  io(async () => {
    const out: Array<string> = []
    for (const id of await pendingIds(c, q))
      out.push(decodeTaskMessage((await c.hgetBuffer(`asynq:{${q}}:t:${id}`, "msg"))!).type)
    return out
  })
const count = (types: ReadonlyArray<string>, t: string) => types.filter((x) => x === t).length

layer(testBrokerLayer())("PeriodicTaskManager (real Redis, TestClock)", (it) => {
  it.effect("syncs entries from the provider: add, remove, change; runs them; a failing sync keeps the entries", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(at("2026-11-22T10:00:05Z"))
      let configs: ReadonlyArray<PeriodicTaskConfig> = [
        { spec: "@every 30s", type: "a", options: { queue: "m1" } },
        { spec: "* * * * *", type: "b", id: "b-entry", options: { queue: "m1" } }
      ]
      let fail = false
      const provider = {
        getConfigs: () => (fail ? Promise.reject(new Error("config service down")) : Promise.resolve(configs))
      }
      yield* Effect.scoped(
        Effect.gen(function* () {
          const m = yield* makePeriodicTaskManager({ provider, syncIntervalMs: 60_000, id: "ptm-1" })
          const first = yield* m.scheduler.entries
          expect(first.map((e) => e.type).sort()).toEqual(["a", "b"])
          const aId = first.find((e) => e.type === "a")!.id

          yield* TestClock.adjust("25 seconds") // 10:00:30
          expect(yield* waitForEffect("the first enqueue in m1", typesIn("m1"), (t) => t.length === 1)).toEqual(["a"])

          // remove a, change b (same explicit id, new spec), add c
          configs = [
            { spec: "*/2 * * * *", type: "b", id: "b-entry", options: { queue: "m1" } },
            { spec: "@every 20s", type: "c", options: { queue: "m1" } }
          ]
          const r = yield* m.sync
          const cId = (yield* m.scheduler.entries).find((e) => e.type === "c")!.id
          expect([...r.removed].sort()).toEqual([aId, "b-entry"].sort())
          expect([...r.added].sort()).toEqual(["b-entry", cId].sort())
          expect(r.unchanged).toBe(0)
          expect(yield* m.sync).toEqual({ added: [], removed: [], unchanged: 2 })

          const step = (s: Duration.Input, n: number) =>
            TestClock.adjust(s).pipe(
              Effect.andThen(waitForEffect(`${n} tasks in m1`, typesIn("m1"), (t) => t.length === n))
            )
          yield* step("10 seconds", 2) // 10:00:40 c
          const at1 = yield* step("20 seconds", 3) // 10:01:00 c (b is now */2, a is gone)
          expect(at1).toEqual(["a", "c", "c"])
          yield* step("20 seconds", 4) // 10:01:20 c
          yield* step("20 seconds", 5) // 10:01:40 c
          const at2 = yield* step("20 seconds", 7) // 10:02:00 b and c
          expect(count(at2, "a")).toBe(1)
          expect(count(at2, "b")).toBe(1)
          expect(count(at2, "c")).toBe(5)

          // a provider failure or an invalid config changes nothing
          fail = true
          const e1 = yield* Effect.flip(m.sync)
          expect(e1).toMatchObject({
            _tag: "ConfigProviderError",
            message: "the periodic task config provider failed: config service down"
          })
          fail = false
          configs = [{ spec: "@every 5", type: "c" }]
          const e2 = yield* Effect.flip(m.sync)
          expect(e2._tag).toBe("InvalidCronSpec")
          expect((yield* m.scheduler.entries).map((e) => e.type).sort()).toEqual(["b", "c"])

          // the interval sync (every 60 s since start) picks up an empty list: nothing runs any more
          configs = []
          yield* TestClock.adjust("65 seconds") // 10:03:05, past the sync at 10:03:05
          yield* waitForEffect(
            "the interval sync to remove every entry",
            Effect.map(m.scheduler.entries, (es) => es.map((e) => e.id)),
            (ids) => ids.length === 0
          )
          const before = (yield* typesIn("m1")).length
          yield* TestClock.adjust("2 minutes")
          yield* realPause(100)
          expect((yield* typesIn("m1")).length).toBe(before)
        })
      )
    })
  )

  it.effect("the start fails when the first sync fails", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.scoped(
        makePeriodicTaskManager({ provider: { getConfigs: () => Effect.fail("no") }, id: "ptm-2" })
      ).pipe(Effect.flip)
      expect(bad).toMatchObject({
        _tag: "ConfigProviderError",
        message: "the periodic task config provider failed: no"
      })
      const notArray = yield* Effect.scoped(
        makePeriodicTaskManager({ provider: { getConfigs: () => Promise.resolve({} as never) }, id: "ptm-3" })
      ).pipe(Effect.flip)
      expect(notArray.message).toBe(
        "the periodic task config provider returned object, expected an array of { spec, type, payload?, options? }"
      )
      const zone = yield* Effect.scoped(
        makePeriodicTaskManager({
          provider: { getConfigs: () => Effect.succeed([{ spec: "@daily", type: "x", timeZone: "Moon/Base" }]) },
          id: "ptm-4"
        })
      ).pipe(Effect.flip)
      expect(zone._tag).toBe("InvalidTimeZone")
    })
  )
})
