import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { DrainSummary } from "../../src/processor/drain.js"
import { functionDeadlineMessage } from "../../src/processor/errors.js"
import type { TickSummary } from "../../src/processor/maintenance.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { forward } from "../../src/steps/forward.js"
import { queueKeys } from "../../src/wire/keys.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runAt, runNow } from "../aws-lambda/arrange.js"
import { type FrameworkHandle, startFunction } from "./framework.js"

const secret = "gcf-secret"
const redis = rawClient()
let tick: FrameworkHandle
let tickEvent: FrameworkHandle
let drainFn: FrameworkHandle
let drainLong: FrameworkHandle

const scheduleInThePast = (queue: string, n: number) =>
  runAt(
    Date.now() - 3_600_000,
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => enqueue("t", { i }, { queue, processIn: 1000 }),
      { discard: true }
    )
  )

beforeAll(async () => {
  await flushTestDb()
  const env = { REDIS_URL: testRedisUrl(), ENQUEUE_SECRET: secret }
  ;[tick, tickEvent, drainFn, drainLong] = await Promise.all([
    startFunction("tick", env),
    startFunction("tickEvent", env),
    startFunction("drain", env),
    startFunction("drainLong", env)
  ])
}, 150_000)
afterAll(async () => {
  await Promise.all([tick?.stop(), tickEvent?.stop(), drainFn?.stop(), drainLong?.stop()])
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

  it("HTTP tick and drain refuse GET (405, even with valid credentials) and do nothing", async () => {
    await scheduleInThePast("ticked", 2)
    for (const f of [tick, drainFn]) {
      const res = await fetch(f.url, { method: "GET", headers: { "x-asynq-secret": secret } })
      expect(res.status).toBe(405)
      expect(res.headers.get("allow")).toBe("POST")
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed")
    }
    expect(await redis.zcard(queueKeys("ticked").scheduled)).toBe(2)
    await redis.del(queueKeys("ticked").scheduled)
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
      body: JSON.stringify({
        message: { data: Buffer.from("tick").toString("base64"), messageId: "1" },
        subscription: "projects/p/subscriptions/s"
      })
    })
    expect(res.status).toBeLessThan(300)
    expect(await redis.llen(queueKeys("evented").pending)).toBe(4)
    expect(tickEvent.output()).toContain('"moved":4')
  })

  it("drain: processes until the margin before the function timeout, then returns the summary", async () => {
    await runNow(
      Effect.forEach(
        Array.from({ length: 80 }, (_, i) => i),
        (i) => enqueue("d", { i }, { queue: "drained" }),
        { discard: true }
      )
    )
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

  it("drain with tasks longer than the function's timeout (issue 16): each stop is a failed attempt, no task starves, all end archived", async () => {
    const k = queueKeys("long")
    await runNow(
      Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => enqueue("slow", { i }, { queue: "long", maxRetry: 1 }),
        { discard: true }
      )
    )
    const summaries: Array<DrainSummary> = []
    const everStarted = new Set<string>()
    for (let i = 0; i < 30 && (await redis.zcard(k.archived)) < 8; i++) {
      const before = new Set(await redis.lrange(k.pending, 0, -1))
      const res = await fetch(drainLong.url, { method: "POST", headers: { "x-asynq-secret": secret } })
      expect(res.status).toBe(200)
      summaries.push((await res.json()) as DrainSummary)
      // What this invocation took left pending (it never goes back there at the head).
      for (const id of before) if (!(await redis.lrange(k.pending, 0, -1)).includes(id)) everStarted.add(id)
      // The maintenance tick's forward: retries due now go to the back of pending.
      await runNow(forward({ queues: ["long"] }))
    }
    expect(everStarted.size).toBe(8)
    expect(await redis.zcard(k.archived)).toBe(8)
    expect(await redis.llen(k.pending)).toBe(0)
    expect(await redis.zcard(k.retry)).toBe(0)
    expect(await redis.llen(k.active)).toBe(0)
    // 2 attempts (retried 0, 1) per task, each stopped at the deadline.
    const total = (f: (s: DrainSummary) => number) => summaries.reduce((n, s) => n + f(s), 0)
    expect(total((s) => s.stoppedAtDeadline)).toBe(16)
    expect(total((s) => s.retried)).toBe(8)
    expect(total((s) => s.archived)).toBe(8)
    // (requeued is not asserted: on a slow machine a task leased just before the hard stop goes back unrun)
    expect(total((s) => s.succeeded + s.skipped + s.leaseLost + s.gaveUp)).toBe(0)
    expect(summaries.every((s) => s.longTasks === "run")).toBe(true)
    for (const id of await redis.zrange(k.archived, "0", "-1")) {
      expect(decodeTaskMessage((await redis.hgetBuffer(k.task(id), "msg"))!)).toMatchObject({
        retried: 1,
        errorMsg: functionDeadlineMessage
      })
    }
  }, 90_000)
})
