/**
 * The benchmark's payload-size scenarios (issue 34): each library enqueues, one by one and in bulk,
 * tasks carrying a body of the scenario's size, and its worker's handler reads that whole body.
 * Run small (a few dozen tasks) against the test Redis: the figures are not the point here, the
 * payloads are.
 */
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AdapterFactory } from "../../bench/libs/types.js"
import { enqueueBulk, enqueueSerial, payloadBody, processThroughput } from "../../bench/scenarios.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

// A redis-server of its own: the scenarios empty the whole server (FLUSHALL) and zero its statistics, as in a bench run.
let server: RedisServerHandle
let admin: IORedis
beforeAll(async () => {
  server = await startRedisServer()
  admin = new IORedis(server.url, { maxRetriesPerRequest: 1 })
})
afterAll(async () => {
  admin.disconnect()
  await server.stop()
})

const libraries: ReadonlyArray<readonly [string, () => Promise<AdapterFactory>]> = [
  ["effect-asynq", async () => (await import("../../bench/libs/effectAsynq.js")).make],
  ["bee-queue", async () => (await import("../../bench/libs/beeQueue.js")).make],
  ["bullmq", async () => (await import("../../bench/libs/bullmq.js")).make]
]

describe("bench payload-size scenarios", () => {
  it("a body is exactly the size asked for, and differs from task to task", () => {
    for (const size of [1_000, 10_000, 100_000]) {
      expect(payloadBody(size, 7)).toHaveLength(size)
      expect(payloadBody(size, 7)).not.toBe(payloadBody(size, 8))
    }
  })

  for (const [name, factory] of libraries) {
    it(`${name}: enqueues 10 KB payloads one by one and in bulk, and its handler reads every body whole`, async () => {
      const lib = await (await factory())({ redisUrl: server.url, queue: `payload-${name}` })
      try {
        const serial = await enqueueSerial(lib, admin, 20, 10_000)
        expect(serial.tasks).toBe(20)
        const bulk = await enqueueBulk(lib, admin, 50, 10_000)
        // The bodies are in Redis: each pending task holds more than its 10 KB body.
        expect(bulk.bytesPerTask).toBeGreaterThan(10_000)
        const processed = await processThroughput(lib, admin, 60, 10, 60_000, 10_000)
        expect(processed).toMatchObject({ tasks: 60, bodyBytesRead: 10_000 })
      } finally {
        await lib.close()
      }
    }, 120_000)
  }
})
