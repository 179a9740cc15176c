/** The time-boxed drain, run directly on TestClock (the Lambda and Cloud Functions adapters call it per invocation). */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Redis as IORedis } from "ioredis"
import { drain, type DrainSummary } from "../../src/processor/drain.js"
import { RevokeTask, SkipRetry } from "../../src/processor/errors.js"
import { TaskContext } from "../../src/processor/TaskContext.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { brokerLayerAt } from "../support/arrange.js"
import { startRedisServer } from "../support/redis-server.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { brokerTestLayer, runNow } from "../aws-lambda/arrange.js"

const redis = rawClient()
const k = queueKeys("work")
const fill = (n: number, options: { timeout?: number; maxRetry?: number } = {}) =>
  runNow(Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => enqueue("job", { i }, { queue: "work", ...options }), { discard: true }))

beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

type Handler = Parameters<typeof drain>[0]["handler"]

/**
 * Runs a drain on TestClock: deadline at 3000, margin 1000. With `step`, virtual time moves on in
 * 50 ms steps while the drain runs (for handlers that sleep); without, only handlers move it.
 */
const drainOnTestClock = (handler: Handler, concurrency: number, step: boolean) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(
        drain({ queues: ["work"], concurrency, safetyMarginMs: 1000, retryDelay: () => 60_000, handler }, 3000),
        { startImmediately: true }
      )
      while (fiber.pollUnsafe() === undefined) {
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
        if (step) yield* TestClock.adjust(50)
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<DrainSummary>
  )

const sleeping = (ms: number, fail = false): Handler => () =>
  Effect.sleep(ms).pipe(Effect.andThen(fail ? Effect.fail(new Error("boom")) : Effect.void))

describe("processor drain (TestClock)", () => {
  it("stops taking tasks under the safety margin and returns before the deadline", async () => {
    await fill(20)
    const starts: Array<number> = []
    // Each task takes 400 ms of virtual time (the handler moves the clock).
    const handler: Handler = () => Clock.currentTimeMillis.pipe(Effect.tap((t) => Effect.sync(() => void starts.push(t))), Effect.andThen(TestClock.adjust(400)))
    const s = await drainOnTestClock(handler, 1, false)
    expect(s.stoppedBecause).toBe("deadline")
    // Tasks start at 0, 400, ..., 2000 (1000 left is not under the margin); at 2400 it stops.
    expect(starts).toEqual([0, 400, 800, 1200, 1600, 2000])
    expect(s.succeeded).toBe(6)
    expect(s.remainingMs).toBe(600)
    expect(await redis.llen(k.pending)).toBe(20 - s.succeeded)
    expect(await redis.llen(k.active)).toBe(0)
  })

  it("requeues a task still running at half the margin (not counted as a failure)", async () => {
    await fill(3)
    const s = await drainOnTestClock(sleeping(10_000), 2, true)
    expect(s).toMatchObject({ succeeded: 0, retried: 0, requeued: 2, stoppedBecause: "deadline" })
    expect(s.remainingMs).toBeGreaterThan(0)
    expect(await redis.llen(k.pending)).toBe(3)
    expect(await redis.llen(k.active)).toBe(0)
    const first = (await redis.lrange(k.pending, 0, -1))[0]!
    expect(await redis.hget(k.task(first), "state")).toBe("pending")
  })

  it("sends failures to retry, or to the archive when no retry is left, and stops when the queues are empty", async () => {
    await fill(2, { maxRetry: 3 })
    await fill(1, { maxRetry: 0 })
    const s = await drainOnTestClock(sleeping(100, true), 1, true)
    expect(s).toMatchObject({ retried: 2, archived: 1, stoppedBecause: "empty" })
    expect(await redis.zcard(k.retry)).toBe(2)
    expect(await redis.zcard(k.archived)).toBe(1)
  })

  it("counts a task's own timeout as a failed attempt", async () => {
    await fill(1, { timeout: 1000, maxRetry: 5 })
    const s = await drainOnTestClock(sleeping(1500), 1, true)
    expect(s).toMatchObject({ retried: 1, requeued: 0, succeeded: 0 })
    const [id] = await redis.zrange(k.retry, "0", "-1")
    const msg = await redis.hget(k.task(id!), "msg")
    expect(msg).toContain("context deadline exceeded")
  })
})

describe("processor drain runs the Server's handlers and failure rules", () => {
  it("routes by type pattern, gives TaskContext, honours SkipRetry and RevokeTask", async () => {
    const put = (type: string) => runNow(enqueue(type, { t: type }, { queue: "work", maxRetry: 5 }))
    await put("email:welcome")
    await put("email:bounce")
    await put("report:daily")
    await put("audit:old")
    await put("nothing:matches")
    const seen: Array<string> = []
    const s = await drainOnTestClock(
      {
        "email:": (task) =>
          Effect.gen(function* () {
            const ctx = yield* TaskContext
            seen.push(`${ctx.queue}/${task.type}/${ctx.retryCount}/${ctx.maxRetry}`)
            if (task.type === "email:bounce") return yield* Effect.fail(new SkipRetry("address does not exist"))
          }),
        "report:": async (task) => void seen.push(`report ${JSON.stringify(task.json())}`),
        "audit:": () => Effect.fail(new RevokeTask("no longer wanted"))
      },
      1,
      true
    )
    expect(seen.sort()).toEqual(['report {"t":"report:daily"}', "work/email:bounce/0/5", "work/email:welcome/0/5"])
    expect(s).toMatchObject({ succeeded: 2, archived: 1, revoked: 1, retried: 1, requeued: 0, stoppedBecause: "empty" })
    const [retriedId] = await redis.zrange(k.retry, "0", "-1")
    expect(await redis.hget(k.task(retriedId!), "msg")).toContain("handler not found")
    const [archivedId] = await redis.zrange(k.archived, "0", "-1")
    expect(await redis.hget(k.task(archivedId!), "msg")).toContain("address does not exist")
  })
})

describe("processor drain when Redis stops answering", () => {
  it("gives up writing an outcome Redis does not take and still returns before its deadline; the lease lets recover take the task back", async () => {
    // A private server: CLIENT PAUSE would stall every other test file on the shared one.
    const server = await startRedisServer()
    const admin = new IORedis(server.url)
    try {
      const layer = brokerLayerAt({ url: server.url })
      await Effect.runPromise(enqueue("job", {}, { queue: "work" }).pipe(Effect.provide(layer)))
      // The handler succeeds, then every write hangs (EVALSHA counts as a write under CLIENT PAUSE WRITE).
      const handler: Handler = () => Effect.promise(() => admin.call("CLIENT", "PAUSE", "600000", "WRITE"))
      const s = await Effect.runPromise(
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(
            drain({ queues: ["work"], concurrency: 1, safetyMarginMs: 1000, handler }, 3000),
            { startImmediately: true }
          )
          while (fiber.pollUnsafe() === undefined) {
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
            yield* TestClock.adjust(50)
          }
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(Layer.merge(layer, TestClock.layer()))) as Effect.Effect<DrainSummary>
      )
      expect(s).toMatchObject({ succeeded: 0, gaveUp: 1, stoppedBecause: "deadline" })
      expect(s.remainingMs).toBeGreaterThan(0)
      // Drop the write Redis is still holding (as if the function had been frozen), then look:
      // nothing was written, the task is still active under its lease, for recover to return.
      await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
      await admin.call("CLIENT", "UNPAUSE")
      expect(await admin.llen(k.active)).toBe(1)
      expect(await admin.zcard(k.lease)).toBe(1)
    } finally {
      await admin.call("CLIENT", "UNPAUSE").catch(() => {})
      admin.disconnect()
      await server.stop()
    }
  }, 20_000)
})
