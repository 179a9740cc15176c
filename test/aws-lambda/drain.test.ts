import * as Effect from "effect/Effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import type { DrainSummary } from "../../src/processor/drain.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startLambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runNow } from "./arrange.js"
import { invoke } from "./invoke.js"

const redis = rawClient()
const k = queueKeys("work")
const fill = (n: number, options: { timeout?: number; maxRetry?: number } = {}) =>
  runNow(Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => enqueue("job", { i }, { queue: "work", ...options }), { discard: true }))

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
      handler: (msg) => Effect.sleep(100).pipe(Effect.andThen(Effect.sync(() => seen.push(JSON.parse(Buffer.from(msg.payload!).toString()).i))))
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
