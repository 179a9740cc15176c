/**
 * Exactly once across instances: three scheduler instances, each with its own Redis connection
 * (its own Broker) and its own clock (skewed by -1.5 s, 0 and +2 s), tick concurrently over ten
 * simulated minutes. Every occurrence of every entry must be enqueued exactly once.
 */
import { Effect, Exit, Layer, Scope, type Context } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { dueBetween } from "../../src/scheduler/cronSpec.js"
import { schedulerTick, type SchedulerTickSummary } from "../../src/scheduler/tick.js"
import { queueKeys } from "../../src/wire/keys.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { at, entry, historyOf, pendingIds } from "./support.js"

interface Instance {
  readonly scope: Scope.Closeable
  readonly ctx: Context.Context<Broker>
  readonly skewMs: number
}

let c: IORedis
const instances: Array<Instance> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  for (const skewMs of [-1500, 0, 2000]) {
    const scope = await Effect.runPromise(Scope.make())
    const ctx = (await Effect.runPromise(Layer.buildWithScope(testBrokerLayer(), scope))) as Context.Context<Broker>
    instances.push({ scope, ctx, skewMs })
  }
})
afterAll(async () => {
  for (const i of instances) await Effect.runPromise(Scope.close(i.scope, Exit.void))
  c.disconnect()
})

/** One tick of `inst` at its own clock reading of the true time `trueMs`. */
const tickAt = (
  inst: Instance,
  trueMs: number,
  options: Parameters<typeof schedulerTick>[0]
): Promise<SchedulerTickSummary> =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(trueMs + inst.skewMs)
      return yield* schedulerTick(options)
    }).pipe(Effect.provide(TestClock.layer()), Effect.provideContext(inst.ctx))
  )

describe("exactly once per occurrence across 3 instances (real Redis)", () => {
  it("10 minutes of concurrent ticks with skewed clocks", async () => {
    const entries = [
      entry({ spec: "* * * * *", type: "every-minute", options: { queue: "x1" } }),
      entry({ spec: "@every 15s", type: "every-15s", payload: { a: 1 }, options: { queue: "x1" } }),
      entry({ spec: "*/2 * * * *", type: "every-2m", options: { queue: "x2", maxRetry: 1 } }),
      entry({ spec: "CRON_TZ=Asia/Kolkata */5 * * * *", type: "kolkata", options: { queue: "x2" } }),
      entry({ spec: "@hourly", type: "hourly", options: { queue: "x3" } })
    ]
    const t0 = at("2026-11-22T09:55:20Z")
    const tEnd = t0 + 10 * 60_000
    const summaries: Array<SchedulerTickSummary> = []
    for (let t = t0; t <= tEnd; t += 15_000) {
      const round = await Promise.all(
        instances.map((inst) => tickAt(inst, t, { entries, lookbackMs: 0, maxCatchUp: 3 }))
      )
      summaries.push(...round)
    }
    expect(summaries.flatMap((s) => s.errors)).toEqual([])
    const enqueued = summaries.flatMap((s) => s.enqueued)
    const keys = enqueued.map((e) => `${e.entryId}@${e.scheduledAt.toISOString()}`)
    expect(new Set(keys).size).toBe(keys.length) // nothing twice
    // and nothing missing: every occurrence after the first tick (+2 s skew) up to the last (-1.5 s skew)
    for (const e of entries) {
      const expected = dueBetween(e.schedule, t0 + 2000, tEnd - 1500, 10_000).times
      const got = enqueued
        .filter((x) => x.entryId === e.id)
        .map((x) => x.scheduledAt.getTime())
        .sort((a, b) => a - b)
      expect(got, e.spec).toEqual(expected)
    }
    expect(enqueued.filter((x) => x.entryId === entries[0]!.id)).toHaveLength(10)
    expect(enqueued.filter((x) => x.entryId === entries[1]!.id)).toHaveLength(40)
    expect(enqueued.filter((x) => x.entryId === entries[4]!.id).map((x) => x.scheduledAt.toISOString())).toEqual([
      "2026-11-22T10:00:00.000Z"
    ])
    // Redis agrees: one task per enqueue, one history event per task
    const tasks = [...(await pendingIds(c, "x1")), ...(await pendingIds(c, "x2")), ...(await pendingIds(c, "x3"))]
    expect(tasks.sort()).toEqual(enqueued.map((e) => e.taskId).sort())
    for (const e of entries) {
      expect((await historyOf(c, e.id)).map((h) => h.taskId).sort()).toEqual(
        enqueued
          .filter((x) => x.entryId === e.id)
          .map((x) => x.taskId)
          .sort()
      )
    }
  })

  it("30 overlapping ticks at the same instant enqueue the occurrence once", async () => {
    const e = entry({ spec: "@every 1m", type: "stampede", options: { queue: "x4" } })
    const t = at("2026-11-22T12:30:30Z")
    await tickAt(instances[1]!, t, { entries: [e], lookbackMs: 0 })
    const due = at("2026-11-22T12:31:00Z")
    const all = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        tickAt({ ...instances[i % 3]!, skewMs: 0 }, due, { entries: [e], lookbackMs: 0 })
      )
    )
    expect(all.reduce((n, s) => n + s.enqueued.length, 0)).toBe(1)
    expect(all.flatMap((s) => s.errors)).toEqual([])
    expect(await c.llen(queueKeys("x4").pending)).toBe(1)
    expect(await historyOf(c, e.id)).toHaveLength(1)
  })
})
