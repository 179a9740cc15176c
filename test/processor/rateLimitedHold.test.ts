/**
 * `RateLimited({ retryAfter, holdQueue: true })`: besides the task going back (not counted), the
 * whole queue is held for retryAfter across every worker (hold_until in asynq:{q}:flow, read first
 * where tasks are leased), the workers sleep until then, and a queue that had no limit is back to
 * none (no flow hash) after it. Without holdQueue nothing is held. A drain counts RateLimited
 * outcomes in `rateLimited`, not in `retried`. TestClock rules every time here.
 */
import { Clock, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { drain, type DrainSummary } from "../../src/processor/drain.js"
import { RateLimited } from "../../src/processor/errors.js"
import type { Task } from "../../src/processor/Task.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, readTask } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { brokerTestLayer, fillQueue } from "../aws-lambda/arrange.js"
import { startServer, type TestServer } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

/** Real time passing (the servers' clocks stand still): lets a server look at the queue a few times. */
const settleFor = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("RateLimited with holdQueue (real Redis, two in-process workers, TestClock)", () => {
  it("holds the queue for retryAfter on every worker, the task not counted, then all run; no flow hash left", async () => {
    const q = "hold"
    const k = queueKeys(q)
    const ran: Array<string> = []
    let first = true
    const handlers = {
      "hold:api": async () => {
        if (first) {
          first = false
          throw new RateLimited({ retryAfter: 5000, holdQueue: true })
        }
        ran.push("api")
      },
      "hold:other": async (t: Task) => void ran.push(`other:${new TextDecoder().decode(t.payload)}`)
    }
    const opts = {
      concurrency: 2,
      shutdownTimeoutMs: 1000,
      queues: { [q]: 1 },
      delayedTaskCheckIntervalMs: 100,
      pollIntervalMs: 50
    }
    const servers: Array<TestServer> = [
      await startServer(handlers, opts, undefined, baseNowMs),
      await startServer(handlers, opts, undefined, baseNowMs)
    ]
    try {
      const id = await servers[0]!.enqueue("hold:api", undefined, { queue: q, maxRetry: 0 })
      await waitFor(
        "the task back in retry and the queue held",
        async () => ({ retry: await c.zcard(k.retry), hold: await c.hget(k.flow, "hold_until") }),
        (s) => s.retry === 1 && s.hold !== null
      )
      expect(Number(await c.hget(k.flow, "hold_until"))).toBe(baseNowMs + 5000)
      const t = await readTask(c, q, id)
      expect(t.msg!.retried).toBe(0)
      expect(await c.get(k.failedTotal)).toBeNull()
      // Tasks enqueued during the hold stay pending on both workers (each looks several times).
      for (let i = 0; i < 4; i++) await servers[1]!.enqueue("hold:other", String(i), { queue: q })
      await settleFor(600)
      await Promise.all(servers.map((s) => s.run(TestClock.adjust(2000))))
      await settleFor(400)
      expect(ran).toEqual([])
      expect(await c.llen(k.pending)).toBe(4)
      // Past the hold (5 s after it began): everything runs, the rate-limited task too once due.
      await Promise.all(servers.map((s) => s.run(TestClock.adjust(3100))))
      // Time goes on while we wait (100 ms of each server's clock per look): a background loop
      // whose Redis call was still in flight when the clock jumped sleeps from the new time on, and
      // would otherwise never wake (the retried task becomes due only as its forwarder looks again).
      await waitFor(
        "all five ran",
        async () => {
          await Promise.all(servers.map((s) => s.run(TestClock.adjust(100))))
          return ran.length
        },
        (n) => n === 5,
        { timeoutMs: 15_000 }
      )
      expect(ran.filter((r) => r.startsWith("other:")).sort()).toEqual(["other:0", "other:1", "other:2", "other:3"])
      expect(ran).toContain("api")
      // The hold was all the flow hash held: the lease that found it past removed it.
      expect(await c.exists(k.flow)).toBe(0)
      expect(await c.get(k.failedTotal)).toBeNull()
    } finally {
      await Promise.all(servers.map((s) => s.shutdown()))
    }
  }, 60_000)

  it("a queue with a limit keeps it: the hold is added next to it and removed after; without holdQueue nothing is held", async () => {
    const q = "hold-limited"
    const k = queueKeys(q)
    await c.hset(k.flow, "concurrency", "3")
    let n = 0
    const srv = await startServer(
      {
        "h:job": async () => {
          n++
          throw new RateLimited({ retryAfter: 1000, holdQueue: n === 1 })
        }
      },
      { concurrency: 1, shutdownTimeoutMs: 1000, queues: { [q]: 1 }, pollIntervalMs: 50 },
      undefined,
      baseNowMs
    )
    try {
      await srv.enqueue("h:job", undefined, { queue: q })
      await waitFor(
        "held",
        () => c.hget(k.flow, "hold_until"),
        (v) => v !== null
      )
      expect(Number(await c.hget(k.flow, "hold_until"))).toBe(baseNowMs + 1000)
      await srv.run(TestClock.adjust(1000))
      // A later lease removes the hold; the cap stays.
      await srv.enqueue("h:job", undefined, { queue: q })
      await waitFor(
        "the second attempt ran and gave back without a hold",
        () => Promise.resolve(n),
        (x) => x >= 2
      )
      expect(await c.hgetall(k.flow)).toEqual({ concurrency: "3" })
    } finally {
      await srv.shutdown()
    }
  }, 30_000)
})

describe("a drain's summary counts RateLimited apart", () => {
  it("rateLimited, not retried: they are not failed attempts", async () => {
    await fillQueue("drain-rl", 3)
    const summary = await Effect.runPromise(
      Effect.gen(function* () {
        yield* TestClock.setTime(0)
        let i = 0
        const fiber = yield* Effect.forkChild(
          drain(
            {
              queues: ["drain-rl"],
              concurrency: 1,
              safetyMarginMs: 1000,
              handler: () =>
                ++i === 2 ? Effect.fail(new Error("boom")) : Effect.fail(new RateLimited({ retryAfter: 60_000 }))
            },
            3000
          ),
          { startImmediately: true }
        )
        while (fiber.pollUnsafe() === undefined) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
          yield* TestClock.adjust(20)
        }
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<DrainSummary>
    )
    expect(summary).toMatchObject({ succeeded: 0, rateLimited: 2, retried: 1, archived: 0 })
    expect(Number(await c.get(queueKeys("drain-rl").failedTotal))).toBe(1)
  })
})

describe("a drain and a hold", () => {
  it("waits for the hold to end (its deadline allows), then takes the rest; the held task counted in rateLimited", async () => {
    await fillQueue("drain-hold", 5)
    const starts: Array<number> = []
    const summary = await Effect.runPromise(
      Effect.gen(function* () {
        yield* TestClock.setTime(0)
        const fiber = yield* Effect.forkChild(
          drain(
            {
              queues: ["drain-hold"],
              concurrency: 1,
              safetyMarginMs: 1000,
              handler: () =>
                Effect.flatMap(Clock.currentTimeMillis, (now) => {
                  starts.push(now)
                  return starts.length === 1
                    ? Effect.fail(new RateLimited({ retryAfter: 800, holdQueue: true }))
                    : Effect.void
                })
            },
            3000
          ),
          { startImmediately: true }
        )
        while (fiber.pollUnsafe() === undefined) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
          // The clock moves once the first attempt has started (at 0): on a loaded machine the drain
          // may take longer than a few turns of this loop to get there.
          if (starts.length > 0) yield* TestClock.adjust(20)
        }
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<DrainSummary>
    )
    expect(summary).toMatchObject({ succeeded: 4, rateLimited: 1, retried: 0, stoppedBecause: "empty" })
    // The first attempt at 0 held the queue until 800: nothing else started before.
    expect(starts[0]).toBe(0)
    expect(starts.slice(1).every((t) => t >= 800)).toBe(true)
    expect(await c.zcard(queueKeys("drain-hold").retry)).toBe(1)
  })
})
