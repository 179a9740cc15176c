import * as Effect from "effect/Effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { functionDeadlineMessage } from "../../src/processor/errors.js"
import type { DrainSummary } from "../../src/processor/drain.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { startLambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { fillQueue, runNow } from "./arrange.js"
import { invoke } from "./invoke.js"
import { Redis as IORedis } from "ioredis"
import type { Broker } from "../../src/broker/Broker.js"
import { brokerLayerAt } from "../support/arrange.js"
import { startRedisServer } from "../support/redis-server.js"

const runNowAt = <A, E>(url: string, eff: Effect.Effect<A, E, Broker>): Promise<A> =>
  Effect.runPromise(eff.pipe(Effect.provide(brokerLayerAt({ url }))) as Effect.Effect<A>)

const redis = rawClient()
const k = queueKeys("work")
const fill = (n: number, options: { timeout?: number; maxRetry?: number } = {}) => fillQueue("work", n, options)

beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

describe("Lambda processor drain (through the Invoke API, real time)", () => {
  it("with little remaining time: processes some, returns before the deadline, leaves the rest pending", async () => {
    await fill(60)
    const seen: Array<number> = []
    const handler = createProcessorHandler({
      queues: ["work"],
      concurrency: 3,
      safetyMarginMs: 800,
      redis: { url: testRedisUrl() },
      handler: (msg) =>
        Effect.sleep(100).pipe(
          Effect.andThen(Effect.sync(() => seen.push(JSON.parse(Buffer.from(msg.payload!).toString()).i)))
        )
    })
    let remainingAtReturn = -1
    const server = await startLambdaInvokeServer({
      processor: {
        timeoutMs: 2000,
        handler: async (e, ctx) => {
          const s = await handler(e, ctx)
          remainingAtReturn = ctx.getRemainingTimeInMillis()
          return s
        }
      }
    })
    try {
      const res = await invoke(server.client(), "processor", { source: "effect-asynq.dispatcher", queues: ["work"] })
      const s = res.payload as DrainSummary
      expect(res.functionError).toBeUndefined()
      expect(s.stoppedBecause).toBe("deadline")
      expect(remainingAtReturn).toBeGreaterThan(0)
      expect(s.succeeded).toBe(seen.length)
      expect(s.succeeded).toBeGreaterThan(0)
      expect(s.succeeded).toBeLessThan(60)
      expect(await redis.llen(k.pending)).toBe(60 - s.succeeded)
      expect(await redis.llen(k.active)).toBe(0)
    } finally {
      await server.close()
      await handler.runtime.dispose()
    }
  })
})

/**
 * Issue 16, through the handler as Lambda calls it: 8 tasks whose handler takes 5 s, concurrency 5,
 * 3 s left per invocation (margin 2 s: hard stop after 2 s), the tick forwarding retries between
 * invocations. Only outcomes are asserted (real time: how many tasks one invocation starts depends
 * on the machine; on a slow one a task leased just before the hard stop may be requeued unrun).
 */
describe("Lambda processor drain with tasks longer than an invocation (issue 16)", () => {
  it("every task gets its turns, each stop counts as a failed attempt, all end archived with the deadline error", async () => {
    await fill(8, { maxRetry: 2 })
    const starts: Array<string> = []
    const processor = createProcessorHandler({
      queues: ["work"],
      concurrency: 5,
      safetyMarginMs: 2000,
      retryDelay: () => 0,
      redis: { url: testRedisUrl() },
      handler: (task) => Effect.sync(() => void starts.push(task.id)).pipe(Effect.andThen(Effect.sleep(5000)))
    })
    const tick = createTickHandler({ queues: ["work"], redis: { url: testRedisUrl() }, log: () => {} })
    const context = { functionName: "processor", awsRequestId: "r", getRemainingTimeInMillis: () => 3000 }
    const summaries: Array<DrainSummary> = []
    try {
      for (let i = 0; i < 30 && (await redis.zcard(k.archived)) < 8; i++) {
        summaries.push(await processor({}, context))
        await tick()
      }
    } finally {
      await processor.runtime.dispose()
      await tick.runtime.dispose()
    }
    expect(await redis.zcard(k.archived)).toBe(8)
    expect(await redis.llen(k.pending)).toBe(0)
    expect(await redis.zcard(k.retry)).toBe(0)
    expect(await redis.llen(k.active)).toBe(0)
    // Every attempt was stopped at the deadline and counted: 3 attempts (retried 0, 1, 2) per task.
    const total = (f: (s: DrainSummary) => number) => summaries.reduce((n, s) => n + f(s), 0)
    expect(starts).toHaveLength(24)
    expect(total((s) => s.stoppedAtDeadline)).toBe(24)
    expect(total((s) => s.retried)).toBe(16)
    expect(total((s) => s.archived)).toBe(8)
    expect(total((s) => s.succeeded + s.skipped + s.leaseLost + s.gaveUp)).toBe(0)
    const runs = new Map<string, number>()
    for (const id of starts) runs.set(id, (runs.get(id) ?? 0) + 1)
    expect([...runs.values()]).toEqual(Array(8).fill(3))
    // No task starves: every task had its first turn before any task had its third.
    const firstThird = starts.findIndex((id, i) => starts.slice(0, i).filter((x) => x === id).length === 2)
    expect(new Set(starts.slice(0, firstThird)).size).toBe(8)
    for (const id of await redis.zrange(k.archived, "0", "-1")) {
      expect(decodeTaskMessage((await redis.hgetBuffer(k.task(id), "msg"))!)).toMatchObject({
        retried: 2,
        errorMsg: functionDeadlineMessage
      })
    }
  }, 90_000)
})

/**
 * Issue 29, point 3, through the Invoke API with Lambda's default 3 s timeout and the handler's
 * defaults: the drain does work (it used to take nothing, its margin being 10 s), and a Redis that
 * stalls midway still gets the invocation's summary back before Lambda's own timeout.
 */
describe("Lambda processor at Lambda's default 3 s timeout (issue 29)", () => {
  it("with no margin configured, processes tasks and returns before the timeout", async () => {
    await fill(200)
    const handler = createProcessorHandler({
      queues: ["work"],
      redis: { url: testRedisUrl() },
      handler: () => Effect.sleep(5)
    })
    const server = await startLambdaInvokeServer({
      processor: { timeoutMs: 3000, handler: (e, ctx) => handler(e, ctx) }
    })
    try {
      const res = await invoke(server.client(), "processor", {})
      const s = res.payload as DrainSummary
      expect(res.functionError).toBeUndefined()
      expect(s.succeeded).toBeGreaterThan(0)
      expect(s.remainingMs).toBeGreaterThan(0)
      expect(await redis.llen(k.pending)).toBe(200 - s.succeeded)
    } finally {
      await server.close()
      await handler.runtime.dispose()
    }
  }, 30_000)

  it("Redis stalled mid-invocation: the handler returns the work it did (stoppedBecause redis-unavailable) before Lambda's timeout; nothing lost", async () => {
    const own = await startRedisServer()
    const admin = new IORedis(own.url)
    try {
      await runNowAt(
        own.url,
        Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i),
          (i) => enqueue("job", { i }, { queue: "work" }),
          { discard: true }
        )
      )
      let runs = 0
      const handler = createProcessorHandler({
        queues: ["work"],
        redis: { url: own.url },
        // The 41st task stalls the whole server for longer than the invocation.
        handler: () =>
          ++runs === 41 ? Effect.promise(() => admin.call("CLIENT", "PAUSE", "8000", "ALL")) : Effect.void
      })
      const server = await startLambdaInvokeServer({
        processor: { timeoutMs: 3000, handler: (e, ctx) => handler(e, ctx) }
      })
      try {
        const res = await invoke(server.client(), "processor", {})
        expect(res.functionError).toBeUndefined()
        const s = res.payload as DrainSummary
        expect(s).toMatchObject({ succeeded: 40, gaveUp: 1, stoppedBecause: "redis-unavailable" })
        expect(s.error).toBeTypeOf("string")
        expect(s.remainingMs).toBeGreaterThan(0)
      } finally {
        await server.close()
        await admin.call("CLIENT", "UNPAUSE")
        await handler.runtime.dispose()
      }
      // Nothing lost: 40 done; the rest pending, or active under a lease for recover to return.
      const ko = queueKeys("work")
      expect((await admin.llen(ko.pending)) + (await admin.llen(ko.active))).toBeGreaterThanOrEqual(19)
      expect((await admin.llen(ko.pending)) + (await admin.llen(ko.active))).toBeLessThanOrEqual(20)
    } finally {
      admin.disconnect()
      await own.stop()
    }
  }, 30_000)
})
