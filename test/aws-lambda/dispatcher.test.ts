import * as Effect from "effect/Effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createDispatcherHandler } from "../../adapters/aws-lambda/dispatcherHandler.js"
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
  runNow(Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => enqueue("job", { i }, { queue }), { discard: true, concurrency: 16 }))

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
      createDispatcherHandler({ queues: ["work"], processorFunctionName: "processor", redis: { url: testRedisUrl() }, ...over } as never)
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

  it("reports invocations Lambda refused (unknown function) as failures", async () => {
    await fill("low", 12)
    const bad = createDispatcherHandler({ queues: ["low"], processorFunctionName: "missing", tasksPerInvocation: 10, redis: { url: testRedisUrl() }, lambda: server.client() })
    const summary = await bad()
    await bad.runtime.dispose()
    expect(summary.invoked).toBe(0)
    expect(summary.failures.length).toBe(2)
    expect(summary.failures[0]).toContain("Function not found")
  })
})
