/**
 * Dispatch on enqueue and the hybrid fleet, with the real SDK against the loopback Invoke
 * endpoint: the enqueue function invokes the dispatcher when it starts a queue; the dispatcher
 * with `spilloverAbove` leaves the steady load to a real long-lived worker and invokes Lambda
 * processors only for the overflow (backlog or age past the thresholds).
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createDispatcherHandler } from "../../adapters/aws-lambda/dispatcherHandler.js"
import { invokeOnQueueStarted } from "../../adapters/aws-lambda/dispatchTrigger.js"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { runWorker, type WorkerHandle } from "../../adapters/worker/runWorker.js"
import { spilloverAbove as exampleSpillover } from "../../examples/hybrid-fleet/fleet.js"
import { queueKeys } from "../../src/wire/keys.js"
import { httpEvent } from "../aws-lambda/invoke.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

const secret = "fleet-secret"
const redis = rawClient()
let server: LambdaInvokeServer
const ranOnLambda: Array<string> = []
const disposers: Array<() => Promise<void>> = []

beforeAll(async () => {
  server = await startLambdaInvokeServer()
})
beforeEach(async () => {
  await flushTestDb()
  server.invocations.length = 0
  ranOnLambda.length = 0
})
afterAll(async () => {
  for (const d of disposers) await d()
  await server.close()
  redis.disconnect()
})

/** Defines the processor (a real drain) and a dispatcher in the Invoke server, for `queue`. */
const defineFunctions = (queue: string, spilloverAbove?: { backlog?: number; oldestPendingAgeMs?: number }) => {
  const processor = createProcessorHandler({
    queues: [queue],
    concurrency: 4,
    safetyMarginMs: 2000,
    redis: { url: testRedisUrl() },
    handler: (task) => Effect.sync(() => void ranOnLambda.push(task.id))
  })
  const dispatcher = createDispatcherHandler({
    queues: [queue],
    processorFunctionName: "processor",
    tasksPerInvocation: 5,
    maxConcurrency: 10,
    ...(spilloverAbove ? { spilloverAbove } : {}),
    redis: { url: testRedisUrl() },
    lambda: server.client(),
    log: () => {}
  })
  server.define("processor", { handler: (e, ctx) => processor(e, ctx), timeoutMs: 10_000 })
  server.define("dispatcher", { handler: (e, ctx) => dispatcher(e, ctx) })
  disposers.push(processor.runtime.dispose, dispatcher.runtime.dispose)
  return { processor, dispatcher }
}

const calls = (name: string) => server.invocations.filter((i) => i.functionName === name)

describe("dispatch on enqueue", () => {
  it("the enqueue that starts a queue invokes the dispatcher, which starts a processor: the task runs without waiting for the schedule", async () => {
    defineFunctions("instant")
    const enqueue = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: testRedisUrl() },
      onQueueStarted: invokeOnQueueStarted({ functionName: "dispatcher", lambda: server.client() })
    })
    disposers.push(enqueue.runtime.dispose)
    const res = await enqueue(
      httpEvent(JSON.stringify({ type: "job", options: { queue: "instant" } }), { "x-asynq-secret": secret })
    )
    expect(res.statusCode).toBe(200)
    const id = JSON.parse(res.body).id as string
    expect(calls("dispatcher").map((c) => c.payload)).toEqual([{ source: "effect-asynq.enqueue", queue: "instant" }])
    await server.settled()
    expect(calls("processor").length).toBe(1)
    expect(ranOnLambda).toEqual([id])
    expect(await redis.llen(queueKeys("instant").pending)).toBe(0)
  })

  it("does not trigger when the queue already had pending tasks, nor for a scheduled task", async () => {
    const trigger: Array<string> = []
    const enqueue = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: testRedisUrl() },
      onQueueStarted: (q) => void trigger.push(q)
    })
    disposers.push(enqueue.runtime.dispose)
    const send = (options: Record<string, unknown>) =>
      enqueue(
        httpEvent(JSON.stringify({ type: "job", options: { queue: "busy", ...options } }), { "x-asynq-secret": secret })
      )
    expect((await send({ processIn: 60_000 })).statusCode).toBe(200)
    expect(trigger).toEqual([])
    expect((await send({})).statusCode).toBe(200)
    expect((await send({})).statusCode).toBe(200)
    expect(trigger).toEqual(["busy"])
  })

  it("a failing trigger is logged; the enqueue still answers 200 and the task is stored", async () => {
    const logged: Array<string> = []
    const enqueue = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: testRedisUrl() },
      log: (l) => logged.push(l),
      onQueueStarted: invokeOnQueueStarted({ functionName: "no-such-dispatcher", lambda: server.client() })
    })
    disposers.push(enqueue.runtime.dispose)
    const res = await enqueue(
      httpEvent(JSON.stringify({ type: "job", options: { queue: "lonely" } }), { "x-asynq-secret": secret })
    )
    expect(res.statusCode).toBe(200)
    expect(await redis.llen(queueKeys("lonely").pending)).toBe(1)
    expect(logged.join("\n")).toContain("onQueueStarted failed")
    expect(logged.join("\n")).toContain("Function not found")
  })
})

describe("hybrid fleet: a long-lived worker and the dispatcher with spilloverAbove", () => {
  let worker: WorkerHandle | undefined
  afterAll(async () => {
    await worker?.shutdown()
  })

  it("below the backlog threshold Lambda is left alone; above it only the excess is dispatched, and the processors drain the overflow", async () => {
    const { dispatcher } = defineFunctions("fleet", { backlog: 5 })
    // The worker takes one task at a time and holds it until released: the backlog builds up.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const ranOnWorker: Array<string> = []
    worker = await runWorker({
      redis: testRedisUrl(),
      queues: { fleet: 1 },
      concurrency: 1,
      logLevel: "None",
      handlers: async (task) => {
        ranOnWorker.push(task.id)
        await gate
      }
    })
    const enqueue = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: testRedisUrl() } })
    disposers.push(enqueue.runtime.dispose)
    const add = async (n: number) => {
      for (let i = 0; i < n; i++)
        expect(
          (
            await enqueue(
              httpEvent(JSON.stringify({ type: "job", payload: { i }, options: { queue: "fleet" } }), {
                "x-asynq-secret": secret
              })
            )
          ).statusCode
        ).toBe(200)
    }
    await add(4)
    await waitFor("the worker to take a task", () => ranOnWorker.length === 1)
    const calm = await dispatcher()
    expect(calm.backlog).toBe(3)
    expect(calm).toMatchObject({ wanted: 0, invoked: 0 })
    expect(calls("processor")).toEqual([])

    await add(12) // 15 pending: 10 above the threshold, 5 per invocation
    const busy = await dispatcher()
    expect(busy.backlog).toBe(15)
    expect(busy).toMatchObject({ wanted: 2, invoked: 2, failures: [] })
    await server.settled()
    expect(calls("processor").length).toBe(2)
    // The processors drained the overflow (a drain runs until its queue is empty).
    expect(ranOnLambda.length).toBe(15)
    expect(await redis.llen(queueKeys("fleet").pending)).toBe(0)
    release()
    await waitFor("the worker to finish", () => worker!.activeCount() === 0)
    expect(new Set([...ranOnWorker, ...ranOnLambda]).size).toBe(16)
  }, 30_000)

  it("the age threshold: one invocation once the oldest pending task has waited longer than oldestPendingAgeMs (the example's settings)", async () => {
    const { dispatcher } = defineFunctions("aged", { oldestPendingAgeMs: exampleSpillover.oldestPendingAgeMs! })
    const enqueue = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: testRedisUrl() } })
    disposers.push(enqueue.runtime.dispose)
    const ids: Array<string> = []
    for (let i = 0; i < 2; i++)
      ids.push(
        JSON.parse(
          (
            await enqueue(
              httpEvent(JSON.stringify({ type: "job", options: { queue: "aged" } }), { "x-asynq-secret": secret })
            )
          ).body
        ).id
      )
    const fresh = await dispatcher()
    expect(fresh).toMatchObject({ backlog: 2, wanted: 0, invoked: 0 })
    expect(fresh.oldestPendingAgeMs).toBeLessThan(exampleSpillover.oldestPendingAgeMs!)
    // Arrange: the oldest task has been pending for two minutes (pending_since is unix ns).
    const twoMinutesAgoNs = (BigInt(Date.now() - 120_000) * 1_000_000n).toString()
    await redis.hset(queueKeys("aged").task(ids[0]!), "pending_since", twoMinutesAgoNs)
    const old = await dispatcher()
    expect(old).toMatchObject({ backlog: 2, wanted: 1, invoked: 1 })
    expect(old.oldestPendingAgeMs).toBeGreaterThan(exampleSpillover.oldestPendingAgeMs!)
    await server.settled()
    expect(ranOnLambda.sort()).toEqual([...ids].sort())
  }, 30_000)

  it("refuses an empty or negative spilloverAbove at creation", () => {
    const make = (spilloverAbove: unknown) => () =>
      createDispatcherHandler({
        queues: ["q"],
        processorFunctionName: "p",
        spilloverAbove: spilloverAbove as never,
        redis: { url: testRedisUrl() },
        lambda: server.client()
      })
    expect(make({})).toThrow("spilloverAbove needs backlog, oldestPendingAgeMs or both")
    expect(make({ backlog: -1 })).toThrow("spilloverAbove.backlog must be a whole number >= 0, got -1")
    expect(make({ backlog: 0 })).not.toThrow()
  })
})
