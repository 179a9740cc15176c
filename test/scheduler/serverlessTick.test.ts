/**
 * The cron-function form: the scheduler tick as the `extra` step of the Lambda and Cloud
 * Functions maintenance tick. Two containers (two connections) invoked at the same time enqueue
 * the due occurrence once.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { createTickEventFunction } from "../../adapters/gcp-functions/tickFunction.js"
import { schedulerTick, type SchedulerTickSummary } from "../../src/scheduler/tick.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { historyOf, pendingIds } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})

const entries = [{ spec: "@hourly", type: "hourly:report", options: { queue: "sl1" } }] as const
const config = {
  queues: ["sl1"],
  redis: { url: testRedisUrl() },
  log: () => {},
  // first invocation ever: the occurrence of the last hour is still due
  extra: schedulerTick({ entries, lookbackMs: 3_600_000 })
}
const lambdaA = createTickHandler(config)
const lambdaB = createTickHandler(config)
const gcf = createTickEventFunction(config)
afterAll(async () => {
  await Promise.all([lambdaA.runtime.dispose(), lambdaB.runtime.dispose(), gcf.runtime.dispose()])
  c.disconnect()
})

describe("scheduler tick inside the maintenance tick", () => {
  it("overlapping Lambda and Cloud Functions invocations enqueue the hour's occurrence once", async () => {
    const results = await Promise.all([lambdaA(), lambdaB(), gcf({} as never), lambdaA()])
    const extras = results.map((r) => r.extra as SchedulerTickSummary)
    expect(results.flatMap((r) => r.errors)).toEqual([])
    const enqueued = extras.flatMap((e) => e.enqueued)
    expect(enqueued).toHaveLength(1)
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000
    expect([hour, hour - 3_600_000]).toContain(enqueued[0]!.scheduledAt.getTime()) // (a run across the hour boundary)
    expect(await pendingIds(c, "sl1")).toEqual([enqueued[0]!.taskId])
    // later invocations in the same hour find nothing to do
    const again = (await lambdaB()).extra as SchedulerTickSummary
    expect(again.enqueued).toEqual([])
    expect(await pendingIds(c, "sl1")).toHaveLength(1)
    expect((await historyOf(c, enqueued[0]!.entryId)).map((h) => h.taskId)).toEqual([enqueued[0]!.taskId])
  })
})
