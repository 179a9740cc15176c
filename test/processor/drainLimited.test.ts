/**
 * A time-boxed drain on a queue with a rate limit: it waits for the limit's next allowance (the
 * time the dequeue names) instead of taking the held-back fetch for an empty queue, while its
 * deadline allows. TestClock: the limit's time is the drain's clock.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { drain, type DrainSummary } from "../../src/processor/drain.js"
import { setQueueLimit } from "../../src/steps/queueLimit.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { brokerTestLayer, fillQueue, runNow } from "../aws-lambda/arrange.js"

const redis = rawClient()
beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

/** A drain of "limited" on TestClock from 0, deadline 3000, margin 1000; virtual time moves 20 ms per real 2 ms. */
const drainLimited = (concurrency: number) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(0)
      const fiber = yield* Effect.forkChild(
        drain({ queues: ["limited"], concurrency, safetyMarginMs: 1000, handler: () => Effect.void }, 3000),
        { startImmediately: true }
      )
      while (fiber.pollUnsafe() === undefined) {
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
        yield* TestClock.adjust(20)
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<DrainSummary>
  )

describe("drain on a rate-limited queue (TestClock)", () => {
  it("takes the tasks the limit allows before its deadline, at the limit's pace, and leaves the rest pending", async () => {
    await fillQueue("limited", 20)
    // One task every 250 ms until the margin (2000 ms of the 3000 ms): 9 (at 0, 250, …, 2000), or 8
    // when virtual time's 20 ms steps wake the drain late (burst 1 does not catch up). Without the
    // wait the drain would take one task and stop, as for an empty queue.
    await runNow(setQueueLimit("limited", { rate: { limit: 4, per: "1s" }, burst: 1 }))
    const summary = await drainLimited(3)
    expect(summary.succeeded).toBeGreaterThanOrEqual(8)
    expect(summary.succeeded).toBeLessThanOrEqual(9)
    expect(await redis.llen(queueKeys("limited").pending)).toBe(20 - summary.succeeded)
    expect(await redis.llen(queueKeys("limited").active)).toBe(0)
  })
})
