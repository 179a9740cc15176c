import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { DrainSummary } from "../../src/processor/drain.js"
import type { TickSummary } from "../../src/processor/maintenance.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runAt, runNow } from "../aws-lambda/arrange.js"
import { type FrameworkHandle, startFunction } from "./framework.js"

const secret = "gcf-secret"
const redis = rawClient()
let tick: FrameworkHandle
let tickEvent: FrameworkHandle
let drainFn: FrameworkHandle

const scheduleInThePast = (queue: string, n: number) =>
  runAt(Date.now() - 3_600_000, Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => enqueue("t", { i }, { queue, processIn: 1000 }), { discard: true }))

beforeAll(async () => {
  await flushTestDb()
  const env = { REDIS_URL: testRedisUrl(), ENQUEUE_SECRET: secret }
  ;[tick, tickEvent, drainFn] = await Promise.all([startFunction("tick", env), startFunction("tickEvent", env), startFunction("drain", env)])
}, 150_000)
afterAll(async () => {
  await Promise.all([tick?.stop(), tickEvent?.stop(), drainFn?.stop()])
  redis.disconnect()
})

describe("Cloud Functions maintenance tick and drain (Functions Framework over HTTP)", () => {
  it("HTTP tick: 401 without the secret, else forwards due tasks and answers with the summary", async () => {
    await scheduleInThePast("ticked", 7)
    expect((await fetch(tick.url, { method: "POST" })).status).toBe(401)
    expect(await redis.zcard(queueKeys("ticked").scheduled)).toBe(7)
    const res = await fetch(tick.url, { method: "POST", headers: { "x-asynq-secret": secret } })
    expect(res.status).toBe(200)
    const summary = (await res.json()) as TickSummary
    expect(summary.forwarded).toMatchObject({ moved: 7, byQueue: { ticked: 7 } })
    expect(summary.errors).toEqual([])
    expect(await redis.llen(queueKeys("ticked").pending)).toBe(7)
  })

  it("CloudEvent tick (Pub/Sub message from Cloud Scheduler) forwards due tasks", async () => {
    await scheduleInThePast("evented", 4)
    const res = await fetch(tickEvent.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "ce-id": "1234",
        "ce-specversion": "1.0",
        "ce-type": "google.cloud.pubsub.topic.v1.messagePublished",
        "ce-source": "//pubsub.googleapis.com/projects/p/topics/asynq-tick",
        "ce-time": new Date().toISOString()
      },
      body: JSON.stringify({ message: { data: Buffer.from("tick").toString("base64"), messageId: "1" }, subscription: "projects/p/subscriptions/s" })
    })
    expect(res.status).toBeLessThan(300)
    expect(await redis.llen(queueKeys("evented").pending)).toBe(4)
    expect(tickEvent.output()).toContain('"moved":4')
  })

  it("drain: processes until the margin before the function timeout, then returns the summary", async () => {
    await runNow(Effect.forEach(Array.from({ length: 80 }, (_, i) => i), (i) => enqueue("d", { i }, { queue: "drained" }), { discard: true }))
    expect((await fetch(drainFn.url, { method: "POST" })).status).toBe(401)
    const res = await fetch(drainFn.url, { method: "POST", headers: { "x-asynq-secret": secret } })
    expect(res.status).toBe(200)
    const s = (await res.json()) as DrainSummary
    expect(s.stoppedBecause).toBe("deadline")
    expect(s.remainingMs).toBeGreaterThan(0)
    expect(s.succeeded).toBeGreaterThan(0)
    expect(await redis.llen(queueKeys("drained").pending)).toBe(80 - s.succeeded)
    expect(await redis.llen(queueKeys("drained").active)).toBe(0)
  })
})
