/**
 * The one-pass effects the Server's loops and the maintenance tick share: with `rounds: "one"` a
 * pass calls its step once (a tick's bounded work, reporting what may be left); with `rounds:
 * "all"` it goes on until nothing is left (the Server's loops).
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { forwardPass } from "../../src/processor/forwarder.js"
import { janitorPass } from "../../src/processor/janitor.js"
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
    await runAt(t0, Effect.forEach([1, 2, 3, 4, 5], (i) => enqueue("later", { i }, { queue: "passes", processIn: 60_000 }), { discard: true }))
    const one = await runAt(t0 + 120_000, forwardPass({ queues: ["passes"], batch: 2, rounds: "one" }))
    // The three left are due at t0 + 60 s, to the millisecond.
    expect(one).toEqual({ moved: 2, byQueue: { passes: 2 }, more: ["passes"], failedQueues: [], nextDueAtMs: t0 + 60_000 })
    const wake = makeSignal()
    const all = await runAt(t0 + 120_000, forwardPass({ queues: ["passes"], batch: 2, rounds: "all", wake }))
    expect(all).toEqual({ moved: 3, byQueue: { passes: 3 }, more: [], failedQueues: [], nextDueAtMs: undefined })
    expect(await Effect.runPromise(wake.wait(0))).toBe(true)
    expect(await redis.llen(k.pending)).toBe(5)
    expect(await redis.zcard(k.scheduled)).toBe(0)
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
    expect(await runAt(t0 + 60_000, janitorPass({ queues: ["passes"], batch: 2, rounds: "one" }))).toEqual({ deleted: 2, failedQueues: [] })
    expect(await runAt(t0 + 60_000, janitorPass({ queues: ["passes"], batch: 2, rounds: "all" }))).toEqual({ deleted: 3, failedQueues: [] })
    expect(await redis.zcard(k.completed)).toBe(0)
  })
})
