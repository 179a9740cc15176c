/**
 * The one-pass effects the Server's loops and the maintenance tick share: with `rounds: "one"` a
 * pass calls its step once (a tick's bounded work, reporting what may be left); with `rounds:
 * "all"` it goes on until nothing is left (the Server's loops).
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { forwardPass } from "../../src/processor/forwarder.js"
import { janitorPass } from "../../src/processor/janitor.js"
import { maintenanceTick } from "../../src/processor/maintenance.js"
import { makeSignal } from "../../src/processor/Signal.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { runAt } from "../aws-lambda/arrange.js"

const redis = rawClient()
const k = queueKeys("passes")
const t0 = Date.now() - 3_600_000

beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

describe("forwardPass", () => {
  it("one round moves at most `batch` per queue and names the queue as having more; all rounds move the rest and raise the wake signal", async () => {
    await runAt(
      t0,
      Effect.forEach([1, 2, 3, 4, 5], (i) => enqueue("later", { i }, { queue: "passes", processIn: 60_000 }), {
        discard: true
      })
    )
    const one = await runAt(t0 + 120_000, forwardPass({ queues: ["passes"], batch: 2, rounds: "one" }))
    // The three left are due at t0 + 60 s, to the millisecond.
    expect(one).toEqual({
      moved: 2,
      byQueue: { passes: 2 },
      more: ["passes"],
      failedQueues: [],
      nextDueAtMs: t0 + 60_000
    })
    const wake = makeSignal()
    const all = await runAt(t0 + 120_000, forwardPass({ queues: ["passes"], batch: 2, rounds: "all", wake }))
    expect(all).toEqual({ moved: 3, byQueue: { passes: 3 }, more: [], failedQueues: [], nextDueAtMs: undefined })
    expect(await Effect.runPromise(wake.wait(0))).toBe(true)
    expect(await redis.llen(k.pending)).toBe(5)
    expect(await redis.zcard(k.scheduled)).toBe(0)
  })
})

describe("maintenanceTick with forwardUntilMs (a tick that stays to forward on time)", () => {
  /** Pending ids once the forward that `TestClock.adjust` woke has landed (a real wait for its Redis round trips). */
  const pendingAfterWake = (count: number) =>
    Effect.promise(async () => {
      for (let i = 0; i < 200; i++) {
        if ((await redis.llen(k.pending)) >= count) break
        await new Promise((r) => setTimeout(r, 10))
      }
      return (await redis.lrange(k.pending, 0, -1)).sort()
    })
  /** A short real pause with the TestClock standing still, for the tick's fiber to go back to sleep after a pass. */
  const settle = Effect.promise(() => new Promise((r) => setTimeout(r, 100)))

  it("moves each task on its due millisecond, not one before, until forwardUntilMs; the summary counts every move", async () => {
    const summary = await runAt(
      t0,
      Effect.gen(function* () {
        yield* enqueue("a", {}, { queue: "passes", processIn: 1500, taskId: "in-1500" })
        yield* enqueue("b", {}, { queue: "passes", processIn: 4200, taskId: "in-4200" })
        yield* enqueue("c", {}, { queue: "passes", processIn: 60_000, taskId: "in-60000" })
        const tick = yield* Effect.forkChild(maintenanceTick({ queues: ["passes"], forwardUntilMs: t0 + 10_000 }))
        yield* settle
        yield* TestClock.adjust(1499)
        yield* settle
        expect(yield* pendingAfterWake(0)).toEqual([])
        yield* TestClock.adjust(1)
        expect(yield* pendingAfterWake(1)).toEqual(["in-1500"])
        yield* settle
        yield* TestClock.adjust(4200 - 1500 - 1)
        yield* settle
        expect(yield* pendingAfterWake(1)).toEqual(["in-1500"])
        yield* TestClock.adjust(1)
        expect(yield* pendingAfterWake(2)).toEqual(["in-1500", "in-4200"])
        yield* settle
        yield* TestClock.adjust(10_000 - 4200)
        return yield* Fiber.join(tick)
      })
    )
    expect(summary.errors).toEqual([])
    expect(summary.forwarded).toEqual({
      moved: 2,
      byQueue: { passes: 2 },
      more: [],
      failedQueues: [],
      nextDueAtMs: t0 + 60_000
    })
    expect(await redis.zrange(k.scheduled, "0", "-1")).toEqual(["in-60000"])
  })

  it("without forwardUntilMs, a tick makes one pass and returns: a task due later stays scheduled", async () => {
    const summary = await runAt(
      t0,
      Effect.gen(function* () {
        yield* enqueue("a", {}, { queue: "passes", processIn: 1500, taskId: "in-1500" })
        return yield* maintenanceTick({ queues: ["passes"] })
      })
    )
    expect(summary.forwarded).toEqual({
      moved: 0,
      byQueue: { passes: 0 },
      more: [],
      failedQueues: [],
      nextDueAtMs: t0 + 1500
    })
    expect(await redis.zcard(k.scheduled)).toBe(1)
  })
})

describe("janitorPass", () => {
  it("one round deletes at most `batch` per queue; all rounds delete every expired completed task", async () => {
    await runAt(
      t0,
      Effect.gen(function* () {
        for (let i = 0; i < 5; i++) yield* enqueue("done", { i }, { queue: "passes", retention: 1000 })
        const { tasks } = yield* dequeueLease({ queues: ["passes"], count: 5 })
        for (const t of tasks) yield* complete(t.msg)
      })
    )
    expect(await redis.zcard(k.completed)).toBe(5)
    expect(await runAt(t0 + 60_000, janitorPass({ queues: ["passes"], batch: 2, rounds: "one" }))).toEqual({
      deleted: 2,
      failedQueues: []
    })
    expect(await runAt(t0 + 60_000, janitorPass({ queues: ["passes"], batch: 2, rounds: "all" }))).toEqual({
      deleted: 3,
      failedQueues: []
    })
    expect(await redis.zcard(k.completed)).toBe(0)
  })
})
