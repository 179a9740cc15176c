import * as Effect from "effect/Effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createDispatcherHandler, DispatchFailed } from "../../adapters/aws-lambda/dispatcherHandler.js"
import type { DispatchSummary } from "../../adapters/aws-lambda/dispatch.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { pauseQueue } from "../../src/steps/pauseQueue.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { runNow } from "./arrange.js"
import { invoke } from "./invoke.js"

let server: LambdaInvokeServer
let dispatcher: ReturnType<typeof createDispatcherHandler>

const fill = (queue: string, n: number) =>
  runNow(
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => enqueue("job", { i }, { queue }),
      { discard: true, concurrency: 16 }
    )
  )

beforeAll(async () => {
  server = await startLambdaInvokeServer({ processor: { handler: async () => ({ ok: true }) } })
  dispatcher = createDispatcherHandler({
    queues: ["high", "low"],
    processorFunctionName: "processor",
    maxConcurrency: 5,
    tasksPerInvocation: 10,
    redis: { url: testRedisUrl() },
    lambda: server.client()
  })
  server.define("dispatcher", { handler: (e) => dispatcher(e) })
})
beforeEach(async () => {
  await flushTestDb()
  server.invocations.length = 0
})
afterAll(async () => {
  await server.close()
  await dispatcher.runtime.dispose()
})

const dispatch = async () => {
  const res = await invoke(server.client(), "dispatcher", {})
  expect(res.functionError).toBeUndefined()
  await server.settled()
  const processorCalls = server.invocations.filter((i) => i.functionName === "processor")
  return { summary: res.payload as DispatchSummary, processorCalls }
}

describe("Lambda dispatcher", () => {
  it.each([
    [0, 0, 0],
    [1, 0, 1],
    [7, 3, 1],
    [10, 1, 2],
    [25, 0, 3],
    [30, 19, 5],
    [120, 80, 5]
  ])("high=%i low=%i pending: invokes the processor %i time(s) asynchronously", async (high, low, expected) => {
    await fill("high", high)
    await fill("low", low)
    const { summary, processorCalls } = await dispatch()
    expect(summary.backlog).toBe(high + low)
    expect(summary.invoked).toBe(expected)
    expect(summary.failures).toEqual([])
    expect(processorCalls.length).toBe(expected)
    for (const c of processorCalls) {
      expect(c.invocationType).toBe("Event")
      expect(c.payload).toEqual({ source: "effect-asynq.dispatcher", queues: ["high", "low"] })
    }
  })

  it("refuses to be created without a processor function name, queues, or with a bad cap", () => {
    const make = (over: Record<string, unknown>) => () =>
      createDispatcherHandler({
        queues: ["work"],
        processorFunctionName: "processor",
        redis: { url: testRedisUrl() },
        ...over
      } as never)
    expect(make({ processorFunctionName: "" })).toThrow("dispatcher: processorFunctionName is empty")
    expect(make({ queues: [] })).toThrow("dispatcher: queues must list at least one queue")
    expect(make({ maxConcurrency: 0 })).toThrow("dispatcher: maxConcurrency must be a whole number >= 1, got 0")
    expect(make({ tasksPerInvocation: 2.5 })).toThrow("tasksPerInvocation must be a whole number >= 1, got 2.5")
    expect(make({})).not.toThrow()
  })

  it("does not count a paused queue's backlog", async () => {
    await fill("high", 40)
    await fill("low", 5)
    await runNow(pauseQueue("high"))
    const { summary, processorCalls } = await dispatch()
    expect(summary.backlog).toBe(5)
    expect(processorCalls.length).toBe(1)
  })

  it("fails the invocation when Lambda refused the invocations (unknown function), with the counts", async () => {
    await fill("low", 12)
    const bad = createDispatcherHandler({
      queues: ["low"],
      processorFunctionName: "missing",
      tasksPerInvocation: 10,
      redis: { url: testRedisUrl() },
      lambda: server.client(),
      log: () => {}
    })
    const error = await bad().catch((e: unknown) => e)
    await bad.runtime.dispose()
    expect(error).toBeInstanceOf(DispatchFailed)
    const summary = (error as DispatchFailed).summary
    expect(summary.invoked).toBe(0)
    expect(summary.failures.length).toBe(2)
    expect(summary.failures[0]).toContain("Function not found")
    expect(summary.throttled).toBe(0)
  })

  it("with failOnError: false returns the failures in the summary instead", async () => {
    await fill("low", 5)
    const bad = createDispatcherHandler({
      queues: ["low"],
      processorFunctionName: "missing",
      redis: { url: testRedisUrl() },
      lambda: server.client(),
      failOnError: false,
      log: () => {}
    })
    const summary = await bad()
    await bad.runtime.dispose()
    expect(summary).toMatchObject({ invoked: 0, wanted: 1, throttled: 0, timedOut: 0 })
    expect(summary.failures.length).toBe(1)
  })
})

describe("Lambda dispatcher against a throttling or silent Invoke endpoint (issue 18)", () => {
  it("throttled invocations (429) fail the dispatcher's invocation, counted as throttled: Lambda's Errors metric sees it", async () => {
    server.define("throttled", { handler: async () => ({ ok: true }), respond: "throttle" })
    server.define("dispatch-throttled", {
      handler: (e, ctx) =>
        createDispatcherHandler({
          queues: ["low"],
          processorFunctionName: "throttled",
          tasksPerInvocation: 10,
          redis: { url: testRedisUrl() },
          lambda: server.client(),
          log: () => {}
        })(e, ctx)
    })
    await fill("low", 25)
    const res = await invoke(server.client(), "dispatch-throttled", {})
    expect(res.functionError).toBe("Unhandled")
    expect(res.payload).toMatchObject({ errorType: "DispatchFailed" })
    expect((res.payload as { errorMessage: string }).errorMessage).toContain(
      "3 of 3 processor invocation(s) failed (3 throttled, 0 timed out)"
    )
    expect(server.invocations.filter((i) => i.functionName === "throttled").length).toBe(3)
  })

  it("an Invoke endpoint that never answers: each call is aborted at requestTimeoutMs and the invocation fails", async () => {
    server.define("silent", { handler: async () => ({ ok: true }), respond: "never-answer" })
    const silent = createDispatcherHandler({
      queues: ["low"],
      processorFunctionName: "silent",
      requestTimeoutMs: 200,
      redis: { url: testRedisUrl() },
      lambda: server.client(),
      log: () => {}
    })
    await fill("low", 15)
    const error = await silent().catch((e: unknown) => e)
    await silent.runtime.dispose()
    expect(error).toBeInstanceOf(DispatchFailed)
    expect((error as DispatchFailed).summary).toMatchObject({ wanted: 2, invoked: 0, timedOut: 2, throttled: 0 })
    expect((error as DispatchFailed).summary.failures).toEqual([
      "Invoke did not answer within 200 ms",
      "Invoke did not answer within 200 ms"
    ])
  })

  it("the request timeout is cut to the invocation's remaining time (less a reserve)", async () => {
    server.define("silent", { handler: async () => ({ ok: true }), respond: "never-answer" })
    const silent = createDispatcherHandler({
      queues: ["low"],
      processorFunctionName: "silent",
      redis: { url: testRedisUrl() },
      lambda: server.client(),
      log: () => {}
    })
    await fill("low", 3)
    // 1 200 ms left: the budget is 900 ms (a quarter kept in reserve), far below the 5 000 ms default.
    const error = await silent(
      {},
      { functionName: "d", awsRequestId: "r", getRemainingTimeInMillis: () => 1200 }
    ).catch((e: unknown) => e)
    await silent.runtime.dispose()
    expect(error).toBeInstanceOf(DispatchFailed)
    const [failure] = (error as DispatchFailed).summary.failures
    const ms = Number(/within (\d+) ms/.exec(failure!)![1])
    expect(ms).toBeLessThanOrEqual(900)
    expect(ms).toBeGreaterThan(0)
  })
})
