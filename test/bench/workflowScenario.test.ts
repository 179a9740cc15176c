/**
 * The benchmark's "workflow3" scenario (issue 33): effect-asynq's durable workflows and BullMQ's
 * flows (a parent with three children) each run a few dozen 3-step flows, and every flow's final
 * code sees all three step results. Run small against a redis-server of its own: the figures are
 * not the point here, the flows are.
 */
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AdapterFactory } from "../../bench/libs/types.js"
import { workflow3 } from "../../bench/scenarios.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

// A redis-server of its own: the scenario empties the whole server (FLUSHALL) and zeroes its statistics, as in a bench run.
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
  ["bullmq", async () => (await import("../../bench/libs/bullmq.js")).make]
]

describe("bench workflow3 scenario", () => {
  for (const [name, factory] of libraries) {
    it(`${name}: runs 40 three-step flows at concurrency 10, each seeing its three step results, and counts their Redis commands`, async () => {
      const lib = await (await factory())({ redisUrl: server.url, queue: `flows-${name}` })
      try {
        const r = await workflow3(lib, admin, 40, 10, 60_000)
        expect(r).toMatchObject({ tasks: 40, steps: 3 })
        expect(r.redisCalls).toBeGreaterThan(3)
        expect(r.redisCallsPerStep).toBeCloseTo(r.redisCalls / 3, 1)
        // Run again on the same adapter (the bench's warm-up, then the measured run): a fresh worker.
        expect(await workflow3(lib, admin, 40, 10, 60_000)).toMatchObject({ tasks: 40 })
      } finally {
        await lib.close()
      }
    }, 120_000)
  }
})
