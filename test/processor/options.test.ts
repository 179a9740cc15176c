import { availableParallelism } from "node:os"
import { Effect, Random } from "effect"
import { describe, expect, it } from "vitest"
import { resolveOptions } from "../../src/processor/options.js"
import { queueOrder, strictOrder, weightedOrder } from "../../src/processor/queueOrder.js"
import { computeDeadlineMs, defaultTimeoutMs } from "../../src/processor/runAttempt.js"
import { defaultRetryDelayMs } from "../../src/steps/retryDelay.js"
import { emptyTaskMessage } from "../../src/wire/TaskMessage.js"

describe("server options", () => {
  it("fills in asynq's defaults", async () => {
    const o = await Effect.runPromise(resolveOptions({}))
    expect(o).toMatchObject({
      concurrency: availableParallelism(),
      queues: { default: 1 },
      strictPriority: false,
      shutdownTimeoutMs: 8000,
      healthCheckIntervalMs: 15_000,
      delayedTaskCheckIntervalMs: 5000,
      groupGracePeriodMs: 60_000,
      groupMaxDelayMs: 0,
      groupMaxSize: 0,
      groupCheckIntervalMs: 7000,
      janitorIntervalMs: 8000,
      recovererIntervalMs: 60_000,
      leaseMs: 30_000,
      heartbeatIntervalMs: 5000,
      pollIntervalMs: 1000
    })
    expect(o.isFailure(new Error("x"))).toBe(true)
  })

  it("leaves out queues with weight <= 0 and rejects bad values with a clear InvalidArgument", async () => {
    expect((await Effect.runPromise(resolveOptions({ queues: { a: 2, b: 0, c: -1 } }))).queueNames).toEqual(["a"])
    const err = (o: Parameters<typeof resolveOptions>[0]) => Effect.runPromise(Effect.flip(resolveOptions(o)))
    expect(await err({ concurrency: 0 })).toMatchObject({
      _tag: "InvalidArgument",
      field: "concurrency",
      message: "concurrency must be a whole number >= 1, got 0"
    })
    expect(await err({ queues: { a: 0 } })).toMatchObject({
      field: "queues",
      message: "no queue with a weight > 0 to process"
    })
    expect(await err({ groupGracePeriodMs: 500 })).toMatchObject({ field: "groupGracePeriodMs" })
    expect(await err({ leaseMs: 2000, heartbeatIntervalMs: 2000 })).toMatchObject({ field: "heartbeatIntervalMs" })
  })
})

describe("queue order", () => {
  it("strict: highest weight first", () => {
    expect(strictOrder({ low: 1, critical: 6, default: 3 })).toEqual(["critical", "default", "low"])
  })

  it("weighted: the first queue is drawn in proportion to the weights", async () => {
    const firsts: Record<string, number> = { critical: 0, default: 0, low: 0 }
    const draws = 6000
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < draws; i++) {
          const order = yield* weightedOrder({ critical: 6, default: 3, low: 1 })
          expect([...order].sort()).toEqual(["critical", "default", "low"])
          firsts[order[0]!]!++
        }
      }).pipe(Random.withSeed(42))
    )
    expect(firsts.critical! / draws).toBeCloseTo(0.6, 1)
    expect(firsts.default! / draws).toBeCloseTo(0.3, 1)
    expect(firsts.low! / draws).toBeCloseTo(0.1, 1)
  })

  it("one queue or strict: always the same order", async () => {
    expect(await Effect.runPromise(queueOrder({ only: 5 }, false))).toEqual(["only"])
    expect(await Effect.runPromise(queueOrder({ a: 1, b: 2 }, true))).toEqual(["b", "a"])
  })
})

describe("retry delay and deadline", () => {
  it("default delay is n^4 + 15 + rand[0,30)·(n+1) seconds", async () => {
    for (const n of [0, 1, 3, 10]) {
      for (let i = 0; i < 50; i++) {
        const d = (await Effect.runPromise(defaultRetryDelayMs(n))) / 1000
        expect(Number.isInteger(d)).toBe(true)
        expect(d).toBeGreaterThanOrEqual(n ** 4 + 15)
        expect(d).toBeLessThanOrEqual(n ** 4 + 15 + 29 * (n + 1))
      }
    }
  })

  it("deadline: timeout from now, the task deadline, the earlier of both, or 30 min", () => {
    const now = 1_795_324_740_000
    const m = { ...emptyTaskMessage }
    expect(computeDeadlineMs({ ...m, timeout: 60 }, now)).toBe(now + 60_000)
    expect(computeDeadlineMs({ ...m, deadline: 1_795_324_800 }, now)).toBe(1_795_324_800_000)
    expect(computeDeadlineMs({ ...m, timeout: 600, deadline: 1_795_324_800 }, now)).toBe(1_795_324_800_000)
    expect(computeDeadlineMs({ ...m, timeout: 10, deadline: 1_795_324_800 }, now)).toBe(1_795_324_750_000)
    expect(computeDeadlineMs(m, now)).toBe(now + defaultTimeoutMs)
  })
})
