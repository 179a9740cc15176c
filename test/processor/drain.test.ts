/** The time-boxed drain, run directly on TestClock (the Lambda and Cloud Functions adapters call it per invocation). */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { TestClock } from "effect/testing"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Redis as IORedis } from "ioredis"
import { defaultSafetyMarginMs, drain, type DrainSummary } from "../../src/processor/drain.js"
import { functionDeadlineMessage, RevokeTask, SkipRetry, TaskStopped } from "../../src/processor/errors.js"
import { skippedMessage } from "../../src/processor/settle.js"
import { TaskContext } from "../../src/processor/TaskContext.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { forward } from "../../src/steps/forward.js"
import { queueKeys } from "../../src/wire/keys.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { brokerLayerAt } from "../support/arrange.js"
import { startRedisServer } from "../support/redis-server.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { brokerTestLayer, fillQueue, runAt, runNow } from "../aws-lambda/arrange.js"

const redis = rawClient()
const k = queueKeys("work")
const fill = (n: number, options: { timeout?: number; maxRetry?: number } = {}) => fillQueue("work", n, options)

beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

type Handler = Parameters<typeof drain>[0]["handler"]
type Config = Parameters<typeof drain>[0]

/**
 * Runs a drain on TestClock: deadline at 3000, margin 1000. With `step`, virtual time moves on in
 * 50 ms steps while the drain runs (for handlers that sleep); without, only handlers move it.
 */
const drainOnTestClock = (handler: Handler, concurrency: number, step: boolean) =>
  drainAt(0, { queues: ["work"], concurrency, safetyMarginMs: 1000, retryDelay: () => 60_000, handler }, step)

/** Runs a drain on TestClock from `startMs` with the deadline at startMs + 3000 (time moves as in drainOnTestClock). */
const drainAt = (startMs: number, config: Config, step = true) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(startMs)
      const fiber = yield* Effect.forkChild(drain(config, startMs + 3000), { startImmediately: true })
      while (fiber.pollUnsafe() === undefined) {
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
        // Virtual time moves 20 ms per real step (about 2 ms): a Redis round trip that takes longer on
        // a loaded machine still costs the invocation little of its 3 s.
        if (step) yield* TestClock.adjust(20)
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(Layer.merge(brokerTestLayer(), TestClock.layer()))) as Effect.Effect<DrainSummary>
  )

const sleeping =
  (ms: number, fail = false): Handler =>
  () =>
    Effect.sleep(ms).pipe(Effect.andThen(fail ? Effect.fail(new Error("boom")) : Effect.void))

describe("processor drain (TestClock)", () => {
  it("stops taking tasks under the safety margin and returns before the deadline", async () => {
    await fill(20)
    const starts: Array<number> = []
    // Each task takes 400 ms of virtual time (the handler moves the clock).
    const handler: Handler = () =>
      Clock.currentTimeMillis.pipe(
        Effect.tap((t) => Effect.sync(() => void starts.push(t))),
        Effect.andThen(TestClock.adjust(400))
      )
    const s = await drainOnTestClock(handler, 1, false)
    expect(s.stoppedBecause).toBe("deadline")
    // Tasks start at 0, 400, ..., 2000 (1000 left is not under the margin); at 2400 it stops.
    expect(starts).toEqual([0, 400, 800, 1200, 1600, 2000])
    expect(s.succeeded).toBe(6)
    expect(s.remainingMs).toBe(600)
    expect(await redis.llen(k.pending)).toBe(20 - s.succeeded)
    expect(await redis.llen(k.active)).toBe(0)
  })

  it("stops a task still running at half the margin and counts it as a failed attempt, retried after its backoff", async () => {
    await fill(3, { maxRetry: 5 })
    const reasons: Array<unknown> = []
    const handler: Handler = () =>
      Effect.gen(function* () {
        const ctx = yield* TaskContext
        ctx.signal.addEventListener("abort", () => reasons.push(ctx.signal.reason))
        yield* Effect.sleep(10_000)
      })
    const s = await drainOnTestClock(handler, 2, true)
    expect(s).toMatchObject({
      succeeded: 0,
      retried: 2,
      archived: 0,
      requeued: 0,
      stoppedAtDeadline: 2,
      skipped: 0,
      longTasks: "run",
      stoppedBecause: "deadline"
    })
    expect(s.remainingMs).toBeGreaterThan(0)
    // The handlers' AbortSignal fired with the drain's stop.
    expect(reasons).toHaveLength(2)
    for (const r of reasons)
      expect(r).toMatchObject({ _tag: "TaskStopped", reason: "function-deadline", message: functionDeadlineMessage })
    expect(reasons[0]).toBeInstanceOf(TaskStopped)
    // The third task was never leased: it is the one left in pending, untouched.
    expect(await redis.llen(k.pending)).toBe(1)
    expect(await redis.llen(k.active)).toBe(0)
    // The two stopped ones: retry set, due after the backoff from the hard stop (2500 + 60 000 ms), retried + 1
    // (asynq's zset in whole seconds rounded up, the exact time in due_ms).
    const retrying = await redis.zrange(k.retry, "0", "-1", "WITHSCORES")
    expect(retrying.filter((_, i) => i % 2 === 1)).toEqual(["63", "63"])
    expect((await redis.zrange(k.dueMs, "0", "-1", "WITHSCORES")).filter((_, i) => i % 2 === 1)).toEqual([
      "62500",
      "62500"
    ])
    for (const id of retrying.filter((_, i) => i % 2 === 0)) {
      const msg = decodeTaskMessage((await redis.hgetBuffer(k.task(id), "msg"))!)
      expect(msg).toMatchObject({ retried: 1, errorMsg: functionDeadlineMessage })
    }
  })

  it("archives a task stopped at the hard stop when it has no retry left", async () => {
    await fill(1, { maxRetry: 0 })
    const s = await drainOnTestClock(sleeping(10_000), 1, true)
    expect(s).toMatchObject({ retried: 0, archived: 1, stoppedAtDeadline: 1 })
    const [id] = await redis.zrange(k.archived, "0", "-1")
    expect(decodeTaskMessage((await redis.hgetBuffer(k.task(id!), "msg"))!).errorMsg).toBe(functionDeadlineMessage)
  })

  it("counts a stop at the hard stop even when isFailure says an error is not a failure", async () => {
    await fill(1, { maxRetry: 5 })
    const s = await drainAt(0, {
      queues: ["work"],
      concurrency: 1,
      safetyMarginMs: 1000,
      isFailure: () => false,
      handler: sleeping(10_000)
    })
    expect(s).toMatchObject({ retried: 1, stoppedAtDeadline: 1 })
    const [id] = await redis.zrange(k.retry, "0", "-1")
    expect(decodeTaskMessage((await redis.hgetBuffer(k.task(id!), "msg"))!).retried).toBe(1)
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
      expect(s).toMatchObject({ succeeded: 0, gaveUp: 1, stoppedBecause: "redis-unavailable" })
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

describe("issue 29: the default safety margin scales with the time left (TestClock)", () => {
  it("defaultSafetyMarginMs: a quarter of the time left, at least 500 ms, at most 10 000 ms", () => {
    expect([1000, 3000, 6000, 40_000, 900_000].map(defaultSafetyMarginMs)).toEqual([500, 750, 1500, 10_000, 10_000])
  })

  it("under Lambda's default 3 s with no margin configured: takes tasks until 750 ms are left (it used to take none)", async () => {
    await fill(20)
    const starts: Array<number> = []
    // Each task takes 200 ms of virtual time.
    const handler: Handler = () =>
      Clock.currentTimeMillis.pipe(
        Effect.tap((t) => Effect.sync(() => void starts.push(t))),
        Effect.andThen(TestClock.adjust(200))
      )
    const s = await drainAt(0, { queues: ["work"], concurrency: 1, handler }, false)
    // 800 ms left at 2200 is not under the 750 ms margin; 600 ms at 2400 is.
    expect(starts).toEqual([0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2200])
    expect(s).toMatchObject({ succeeded: 12, stoppedBecause: "deadline", remainingMs: 600 })
    expect(await redis.llen(k.pending)).toBe(8)
  })

  it("a configured margin larger than the time left: no task taken, and a warning says why and what to change", async () => {
    await fill(2)
    const logs: Array<string> = []
    const capture = Logger.make(
      ({ message }) => void logs.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    )
    const s = await Effect.runPromise(
      drain({ queues: ["work"], safetyMarginMs: 10_000, handler: () => Effect.void }, 3000).pipe(
        Effect.provide(Layer.mergeAll(brokerTestLayer(), TestClock.layer(), Logger.layer([capture])))
      ) as Effect.Effect<DrainSummary>
    )
    expect(s).toMatchObject({ succeeded: 0, stoppedBecause: "deadline" })
    expect(logs).toEqual([
      "drain: 3000 ms left at the start, under the safety margin of 10000 ms: no task taken. Raise the function's timeout or lower safetyMarginMs."
    ])
    expect(await redis.llen(k.pending)).toBe(2)
  })
})

describe("issue 29: Redis stalling mid-drain does not lose the report (TestClock)", () => {
  it("returns what it did before its deadline, stoppedBecause redis-unavailable; the task whose outcome Redis did not take is given up, nothing lost", async () => {
    const server = await startRedisServer()
    const admin = new IORedis(server.url)
    try {
      // A long command timeout: only the drain's own time rule can end the wait.
      const layer = brokerLayerAt({ url: server.url, commandTimeoutMs: 60_000 })
      await Effect.runPromise(
        Effect.forEach([0, 1, 2, 3, 4], (i) => enqueue("job", { i }, { queue: "work" }), { discard: true }).pipe(
          Effect.provide(layer)
        )
      )
      let runs = 0
      // The third task stalls the server's writes: its outcome and every later fetch hang.
      const handler: Handler = () =>
        ++runs === 3 ? Effect.promise(() => admin.call("CLIENT", "PAUSE", "600000", "WRITE")) : Effect.void
      const s = await Effect.runPromise(
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(drain({ queues: ["work"], safetyMarginMs: 1000, handler }, 3000), {
            startImmediately: true
          })
          while (fiber.pollUnsafe() === undefined) {
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 2)))
            yield* TestClock.adjust(25)
          }
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(Layer.merge(layer, TestClock.layer()))) as Effect.Effect<DrainSummary>
      )
      expect(s).toMatchObject({ succeeded: 2, gaveUp: 1, stoppedBecause: "redis-unavailable" })
      expect(s.error).toBe("Redis did not take the outcome of 1 task(s) before the deadline")
      // The outcome was given up a quarter of the margin before the deadline (on a 25 ms step).
      expect(s.remainingMs).toBeGreaterThan(0)
      expect(s.remainingMs).toBeLessThanOrEqual(250)
      await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
      await admin.call("CLIENT", "UNPAUSE")
      // Nothing lost: 2 done, the stalled one active under its lease, 2 pending (or leased by the
      // fetch that hung, whose lease recover returns).
      expect((await admin.llen(k.pending)) + (await admin.llen(k.active))).toBe(3)
    } finally {
      await admin.call("CLIENT", "UNPAUSE").catch(() => {})
      admin.disconnect()
      await server.stop()
    }
  }, 30_000)
})

describe("issue 16: tasks longer than an invocation do not block the queue (TestClock)", () => {
  it("8 tasks of 5 s, concurrency 5, 3 s invocations: every task gets turns, retried counts grow, all end archived", async () => {
    await fill(8, { maxRetry: 2 })
    const startedBy: Array<Array<string>> = []
    // Each attempt takes 5 s: longer than the 3 s an invocation has.
    const handler: Handler = (task) =>
      Effect.sync(() => startedBy[startedBy.length - 1]!.push(task.id)).pipe(Effect.andThen(Effect.sleep(5000)))
    const config: Config = { queues: ["work"], concurrency: 5, safetyMarginMs: 1000, retryDelay: () => 0, handler }
    const summaries: Array<DrainSummary> = []
    // One invocation every 10 s; the maintenance tick's forward runs between invocations. Virtual
    // time moves on real-time steps, so on a loaded machine an invocation may lease fewer than 5
    // before its hard stop (a task leased then goes back uncounted): allow invocations until done.
    for (let i = 0; i < 40 && (await redis.zcard(k.archived)) < 8; i++) {
      startedBy.push([])
      summaries.push(await drainAt(i * 10_000, config))
      await runAt(i * 10_000 + 5000, forward({ queues: ["work"] }))
    }
    // 3 attempts per task (retried 0, 1, 2), at most 5 per invocation: 24 attempts, all stopped at the hard stop.
    expect(summaries.length).toBeGreaterThanOrEqual(5)
    const total = (f: (s: DrainSummary) => number) => summaries.reduce((n, s) => n + f(s), 0)
    expect(total((s) => s.stoppedAtDeadline)).toBe(24)
    expect(total((s) => s.retried)).toBe(16)
    expect(total((s) => s.archived)).toBe(8)
    expect(total((s) => s.succeeded + s.skipped)).toBe(0)
    // Each task ran exactly 3 times.
    const starts = startedBy.flat()
    const runs = new Map<string, number>()
    for (const id of starts) runs.set(id, (runs.get(id) ?? 0) + 1)
    expect([...runs.values()]).toEqual(Array(8).fill(3))
    // No task starves: the second invocation takes the tasks the first did not reach before any retried one.
    expect(new Set([...startedBy[0]!, ...startedBy[1]!]).size).toBe(
      Math.min(8, startedBy[0]!.length + startedBy[1]!.length)
    )
    // Every task had its first turn before any task had its third.
    const firstThird = starts.findIndex((id, i) => starts.slice(0, i).filter((x) => x === id).length === 2)
    expect(new Set(starts.slice(0, firstThird)).size).toBe(8)
    // All archived with the deadline error after their retries.
    expect(await redis.llen(k.pending)).toBe(0)
    expect(await redis.zcard(k.retry)).toBe(0)
    expect(await redis.llen(k.active)).toBe(0)
    for (const id of await redis.zrange(k.archived, "0", "-1")) {
      expect(decodeTaskMessage((await redis.hgetBuffer(k.task(id), "msg"))!)).toMatchObject({
        retried: 2,
        errorMsg: functionDeadlineMessage
      })
    }
  })
})

describe("longTasks: a task whose own timeout ends after the drain's hard stop (TestClock)", () => {
  const put = (name: string, options: { timeout?: number } = {}) =>
    runNow(enqueue("job", { name }, { queue: "work", maxRetry: 3, ...options }))
  const recording =
    (seen: Array<string>): Handler =>
    (task) =>
      Effect.sync(() => void seen.push((task.json() as { name: string }).name))

  it('"skip": not started, given back to the retry set (due at the drain\'s deadline, not counted), reported; a short task runs', async () => {
    await put("long", { timeout: 3600 })
    await put("short", { timeout: 1 })
    const seen: Array<string> = []
    const s = await drainAt(0, {
      queues: ["work"],
      concurrency: 1,
      safetyMarginMs: 1000,
      longTasks: "skip",
      handler: recording(seen)
    })
    expect(seen).toEqual(["short"])
    expect(s).toMatchObject({
      succeeded: 1,
      skipped: 1,
      retried: 0,
      archived: 0,
      stoppedAtDeadline: 0,
      longTasks: "skip",
      stoppedBecause: "empty"
    })
    const retrying = await redis.zrange(k.retry, "0", "-1", "WITHSCORES")
    // Due at the drain's deadline (3000 ms): this drain never takes it again.
    expect(retrying).toHaveLength(2)
    expect(retrying[1]).toBe("3")
    const msg = decodeTaskMessage((await redis.hgetBuffer(k.task(retrying[0]!), "msg"))!)
    expect(msg).toMatchObject({ retried: 0, errorMsg: skippedMessage })
    expect(await redis.get(k.failedTotal)).toBeNull()
  })

  it('"skip": a skipped task goes behind the tasks waiting in pending once forwarded', async () => {
    await put("long", { timeout: 3600 })
    const s = await drainAt(0, {
      queues: ["work"],
      concurrency: 1,
      safetyMarginMs: 1000,
      longTasks: "skip",
      handler: recording([])
    })
    expect(s.skipped).toBe(1)
    await put("waiting")
    await runAt(3000, forward({ queues: ["work"] }))
    // Dequeue takes from the right end: the waiting task first, the skipped one after it.
    const names = []
    for (const id of await redis.lrange(k.pending, 0, -1))
      names.push(decodeTaskMessage((await redis.hgetBuffer(k.task(id), "msg"))!).payload)
    expect(names.map((p) => JSON.parse(Buffer.from(p!).toString()).name)).toEqual(["long", "waiting"])
  })

  it('"skip" also skips a task with neither timeout nor deadline (asynq\'s 30-minute default)', async () => {
    await put("default")
    const seen: Array<string> = []
    const s = await drainAt(0, {
      queues: ["work"],
      concurrency: 1,
      safetyMarginMs: 1000,
      longTasks: "skip",
      handler: recording(seen)
    })
    expect(seen).toEqual([])
    expect(s.skipped).toBe(1)
  })

  it("rejects an unknown longTasks value with InvalidArgument", async () => {
    const config = { queues: ["work"], handler: recording([]), longTasks: "later" } as unknown as Config
    const error = await Effect.runPromise(
      Effect.flip(drain(config, 3000)).pipe(Effect.provide(brokerTestLayer())) as Effect.Effect<unknown>
    )
    expect(error).toMatchObject({ _tag: "InvalidArgument", field: "longTasks" })
  })

  it('"run" (the default): the long-timeout task runs', async () => {
    await put("long", { timeout: 3600 })
    await put("default")
    const seen: Array<string> = []
    const s = await drainAt(0, { queues: ["work"], concurrency: 1, safetyMarginMs: 1000, handler: recording(seen) })
    expect(seen.sort()).toEqual(["default", "long"])
    expect(s).toMatchObject({ succeeded: 2, skipped: 0, longTasks: "run" })
  })
})

describe("issue 29: tasks with no handler are warned about once per type and queue per interval (TestClock)", () => {
  it("5 tasks of an unhandled type: 1 warning naming the type, the queue and the retry; again after 60 s", async () => {
    const q = queueKeys("unhandled")
    await runNow(
      Effect.forEach([0, 1, 2, 3, 4], (i) => enqueue("nobody:home", { i }, { queue: "unhandled" }), { discard: true })
    )
    const warnings: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
    const config: Config = {
      queues: ["unhandled"],
      safetyMarginMs: 1000,
      retryDelay: () => 60_000,
      handler: { "somebody:": () => Effect.void }
    }
    const drainFrom = (startMs: number) =>
      Effect.runPromise(
        Effect.gen(function* () {
          yield* TestClock.setTime(startMs)
          return yield* drain(config, startMs + 3000)
        }).pipe(
          Effect.provide(Layer.mergeAll(brokerTestLayer(), TestClock.layer(), Logger.layer([capture])))
        ) as Effect.Effect<DrainSummary>
      )
    const first = await drainFrom(1_000_000)
    expect(first).toMatchObject({ retried: 5, stoppedBecause: "empty" })
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`no handler for task type "nobody:home" in queue "unhandled"`)
    expect(warnings[0]).toContain("go to retry (this one in 60000 ms, attempt 1 of 26")
    expect(await redis.zcard(q.retry)).toBe(5)
    // Within the interval: said once already. After it: said again.
    await runNow(enqueue("nobody:home", { i: 5 }, { queue: "unhandled" }))
    await drainFrom(1_059_000)
    expect(warnings).toHaveLength(1)
    await runNow(enqueue("nobody:home", { i: 6 }, { queue: "unhandled" }))
    await drainFrom(1_061_000)
    expect(warnings).toHaveLength(2)
  })
})

describe("drain with forwardDue (TestClock)", () => {
  const t0 = Math.floor(Date.now() / 1000) * 1000 + 250
  const config = (forwardDue: Config["forwardDue"], starts: Array<[string, number]>): Config => ({
    queues: ["work"],
    safetyMarginMs: 1000,
    handler: (task) => Clock.currentTimeMillis.pipe(Effect.map((now) => void starts.push([task.id, now]))),
    ...(forwardDue !== undefined ? { forwardDue } : {})
  })
  const schedule = () =>
    runAt(
      t0 - 10_000,
      Effect.gen(function* () {
        yield* enqueue("job", {}, { queue: "work", processAt: new Date(t0 - 5_000), taskId: "overdue" })
        yield* enqueue("job", {}, { queue: "work", processAt: new Date(t0 + 500), taskId: "in-500" })
        yield* enqueue("job", {}, { queue: "work", processAt: new Date(t0 + 2_500), taskId: "after-the-margin" })
      })
    )

  it("by default leaves scheduled tasks to the tick, even one already due", async () => {
    await schedule()
    const starts: Array<[string, number]> = []
    const s = await drainAt(t0, config(undefined, starts))
    expect(s).toMatchObject({ succeeded: 0, stoppedBecause: "empty" })
    expect(await redis.zcard(k.scheduled)).toBe(3)
  })

  it("true: forwards and runs what is due when the queue runs empty, and ends without waiting for the rest", async () => {
    await schedule()
    const starts: Array<[string, number]> = []
    const s = await drainAt(t0, config(true, starts))
    expect(s).toMatchObject({ succeeded: 1, stoppedBecause: "empty" })
    expect(starts.map(([id]) => id)).toEqual(["overdue"])
    expect((await redis.zrange(k.scheduled, "0", "-1")).sort()).toEqual(["after-the-margin", "in-500"])
  })

  it("{ waitMs }: also waits for a task that comes due before the margin and runs it on its time; one due after the margin is left", async () => {
    await schedule()
    const starts: Array<[string, number]> = []
    const s = await drainAt(t0, config({ waitMs: 2_000 }, starts))
    expect(s).toMatchObject({ succeeded: 2, stoppedBecause: "empty" })
    expect(starts.map(([id]) => id)).toEqual(["overdue", "in-500"])
    // Not before its due millisecond; virtual time moves 20 ms a step while Redis answers.
    expect(starts[1]![1]).toBeGreaterThanOrEqual(t0 + 500)
    expect(starts[1]![1]).toBeLessThan(t0 + 600)
    expect(await redis.zrange(k.scheduled, "0", "-1")).toEqual(["after-the-margin"])
  })
})
