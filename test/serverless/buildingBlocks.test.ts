/**
 * The public building blocks (effect-asynq/serverless) and the handler factories' Redis sources:
 * options, an open ioredis client the application owns, or a Layer providing Redis.
 */
import * as Effect from "effect/Effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { drain, invocationBudget, maintenanceTick, makeWarmBrokerRuntime } from "../../adapters/serverless/index.js"
import { Redis } from "../../src/redis/Redis.js"
import { queueKeys } from "../../src/wire/keys.js"
import { httpEvent } from "../aws-lambda/invoke.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"

const secret = "blocks-secret"
const redis = rawClient()
beforeEach(() => flushTestDb())
afterAll(() => redis.disconnect())

const enqueueVia = async (handler: ReturnType<typeof createEnqueueHandler>, queue: string) => {
  const res = await handler(
    httpEvent(JSON.stringify({ type: "job", options: { queue } }), { "x-asynq-secret": secret })
  )
  expect(res.statusCode).toBe(200)
  return JSON.parse(res.body).id as string
}

describe("handler factories take options, an open client or a Layer", () => {
  it("an open ioredis client the application owns: used as is, left open after the handler's dispose", async () => {
    const client = new IORedis(testRedisUrl())
    const enqueue = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: client })
    const id = await enqueueVia(enqueue, "owned")
    expect(await redis.lrange(queueKeys("owned").pending, 0, -1)).toEqual([id])
    const ran: Array<string> = []
    const processor = createProcessorHandler({
      queues: ["owned"],
      safetyMarginMs: 1000,
      redis: client,
      handler: (t) => Effect.sync(() => void ran.push(t.id))
    })
    const summary = await processor({}, { functionName: "p", awsRequestId: "r", getRemainingTimeInMillis: () => 5000 })
    expect(summary.succeeded).toBe(1)
    expect(ran).toEqual([id])
    await enqueue.runtime.dispose()
    await processor.runtime.dispose()
    expect(client.status).toBe("ready")
    expect(await client.ping()).toBe("PONG")
    client.disconnect()
  })

  it("a Layer providing Redis (your own settings)", async () => {
    const tick = createTickHandler({
      queues: ["layered"],
      redis: Redis.layer({ url: testRedisUrl(), commandTimeoutMs: 1000 }),
      log: () => {}
    })
    const summary = await tick({}, { functionName: "t", awsRequestId: "r", getRemainingTimeInMillis: () => 5000 })
    expect(summary.errors).toEqual([])
    await tick.runtime.dispose()
  })
})

describe("effect-asynq/serverless building blocks", () => {
  it("a custom handler: the warm runtime runs the tick and then the drain, each bounded by the invocation's budget", async () => {
    const enqueue = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: testRedisUrl() } })
    const id = await enqueueVia(enqueue, "custom")
    await enqueue.runtime.dispose()
    const runtime = makeWarmBrokerRuntime({ url: testRedisUrl() })
    const ran: Array<string> = []
    const handler = async (remainingMs: number) => {
      const budgetMs = invocationBudget(remainingMs)
      const tick = await runtime.run(maintenanceTick({ queues: ["custom"] }), { budgetMs })
      const drained = await runtime.run(
        Effect.flatMap(
          Effect.clockWith((c) => c.currentTimeMillis),
          (now) =>
            drain(
              { queues: ["custom"], safetyMarginMs: 1000, handler: (t) => Effect.sync(() => void ran.push(t.id)) },
              now + remainingMs
            )
        ),
        { budgetMs }
      )
      return { tick, drained }
    }
    const { tick, drained } = await handler(5000)
    expect(tick.errors).toEqual([])
    expect(drained).toMatchObject({ succeeded: 1, stoppedBecause: "empty" })
    expect(ran).toEqual([id])
    await runtime.dispose()
  })

  it("invocationBudget keeps a reserve: a quarter of the time left, at most the reserve asked for", () => {
    expect(invocationBudget(10_000)).toBe(9000)
    expect(invocationBudget(2000)).toBe(1500)
    expect(invocationBudget(10_000, 250)).toBe(9750)
    expect(invocationBudget(0)).toBe(0)
  })
})
