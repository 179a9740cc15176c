/**
 * Per-queue isolation (issue 13, point 3): a queue whose keys Redis refuses (here: a key of the
 * wrong type, as a broken shard would refuse them) is reported for that queue, and every other
 * queue is still served — by the steps, the passes, the Server's loops and the maintenance tick.
 * Nothing leased before the failure is dropped.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { aggregatePass } from "../../src/processor/aggregator.js"
import { drain } from "../../src/processor/drain.js"
import { maintenanceTick } from "../../src/processor/maintenance.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { forward } from "../../src/steps/forward.js"
import { janitor } from "../../src/steps/janitor.js"
import { recover } from "../../src/steps/recover.js"
import { queueKeys } from "../../src/wire/keys.js"
import { runAt, runNow } from "../aws-lambda/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "./support.js"

const redis = rawClient()
const t0 = Date.now() - 3_600_000
const healthy = ["iso-a", "iso-b"] as const

beforeEach(flushTestDb)
afterAll(() => void redis.disconnect())

/** Makes one of the broken queue's keys a string, so every script touching it fails with WRONGTYPE. */
const breakKey = (
  key: keyof ReturnType<typeof queueKeys> & ("pending" | "scheduled" | "lease" | "completed" | "allAggregationSets")
) => redis.set(queueKeys("broken")[key], "x")

const enqueueEach = (n: number, options: { processIn?: number; retention?: number; maxRetry?: number } = {}) =>
  Effect.forEach(
    healthy.flatMap((queue) => Array.from({ length: n }, (_, i) => ({ queue, i }))),
    ({ queue, i }) => enqueue("job", { i }, { queue, ...options }),
    { discard: true }
  )

describe("dequeueLease", () => {
  it("returns the healthy queues' tasks, before and after a queue whose pending key is broken, and reports that queue", async () => {
    await runAt(t0, enqueueEach(2))
    await breakKey("pending")
    const r = await runAt(t0, dequeueLease({ queues: ["iso-a", "broken", "iso-b"], count: 10 }))
    expect(r.tasks.map((t) => t.msg.queue)).toEqual(["iso-a", "iso-a", "iso-b", "iso-b"])
    expect(r.failedQueues.map((f) => f.queue)).toEqual(["broken"])
    expect(r.failedQueues[0]!.error).toContain("WRONGTYPE")
    // Everything handed out is leased and active (nothing taken and dropped).
    for (const q of healthy) expect(await redis.llen(queueKeys(q).active)).toBe(2)
  })
})

describe("forward, recover, janitor with the broken queue listed first", () => {
  it("forward moves the healthy queues' due tasks", async () => {
    await runAt(t0, enqueueEach(3, { processIn: 60_000 }))
    await breakKey("scheduled")
    const r = await runAt(t0 + 120_000, forward({ queues: ["broken", ...healthy] }))
    expect(r.moved).toBe(6)
    expect(r.byQueue).toEqual({ "iso-a": 3, "iso-b": 3 })
    expect(r.failedQueues.map((f) => f.queue)).toEqual(["broken"])
    for (const q of healthy) expect(await redis.llen(queueKeys(q).pending)).toBe(3)
  })

  it("a step fails as a whole (with the queue's error) only when every queue failed", async () => {
    await breakKey("scheduled")
    await breakKey("pending")
    const forwardError = await runAt(t0, Effect.flip(forward({ queues: ["broken"] })))
    expect(forwardError).toMatchObject({ _tag: "RedisError", message: expect.stringContaining("WRONGTYPE") })
    const dequeueError = await runAt(t0, Effect.flip(dequeueLease({ queues: ["broken", "broken"], count: 5 })))
    expect(dequeueError).toMatchObject({ _tag: "RedisError", message: expect.stringContaining("WRONGTYPE") })
  })

  it("recover takes back the healthy queues' expired leases", async () => {
    await runAt(
      t0,
      Effect.gen(function* () {
        yield* enqueueEach(2, { maxRetry: 5 })
        yield* dequeueLease({ queues: [...healthy], count: 10 })
      })
    )
    await breakKey("lease")
    const r = await runAt(t0 + 600_000, recover({ queues: ["broken", ...healthy], retryDelayMs: () => 1000 }))
    expect(r.retried).toBe(4)
    expect(r.failedQueues.map((f) => f.queue)).toEqual(["broken"])
    for (const q of healthy) expect(await redis.zcard(queueKeys(q).retry)).toBe(2)
  })

  it("janitor deletes the healthy queues' expired completed tasks", async () => {
    await runAt(
      t0,
      Effect.gen(function* () {
        yield* enqueueEach(2, { retention: 1000 })
        const { tasks } = yield* dequeueLease({ queues: [...healthy], count: 10 })
        for (const t of tasks) yield* complete(t.msg)
      })
    )
    await breakKey("completed")
    const r = await runAt(t0 + 60_000, janitor({ queues: ["broken", ...healthy] }))
    expect(r.deleted).toBe(4)
    expect(r.failedQueues.map((f) => f.queue)).toEqual(["broken"])
    for (const q of healthy) expect(await redis.zcard(queueKeys(q).completed)).toBe(0)
  })

  it("aggregatePass aggregates the healthy queues' ready groups", async () => {
    await runAt(
      t0,
      Effect.forEach(
        healthy,
        (queue) => Effect.forEach([1, 2], (i) => enqueue("g", { i }, { queue, group: "grp" }), { discard: true }),
        { discard: true }
      )
    )
    await breakKey("allAggregationSets")
    const r = await runAt(
      t0 + 120_000,
      aggregatePass({
        queues: ["broken", ...healthy],
        gracePeriodMs: 1000,
        aggregator: (group, msgs) => ({ type: "agg", payload: { group, n: msgs.length } })
      })
    )
    expect(r.enqueued).toBe(2)
    expect(r.tasks).toBe(4)
    expect(r.failedQueues.map((f) => f.queue)).toEqual(["broken"])
  })
})

describe("maintenanceTick", () => {
  it("reports the broken queue in `errors` and still moves the other queues' tasks", async () => {
    await runAt(t0, enqueueEach(2, { processIn: 60_000 }))
    await runAt(
      t0,
      Effect.gen(function* () {
        yield* enqueue("leased", {}, { queue: "iso-a", maxRetry: 3 })
        yield* dequeueLease({ queues: ["iso-a"], count: 10 })
      })
    )
    await breakKey("scheduled")
    await breakKey("lease")
    await breakKey("completed")
    const tick = await runAt(
      t0 + 600_000,
      maintenanceTick({ queues: ["broken", ...healthy], retryDelayMs: () => 1000 })
    )
    expect(tick.forwarded?.moved).toBe(4)
    expect(tick.recovered?.retried).toBe(1)
    expect(tick.janitor?.deleted).toBe(0)
    const brokenSteps = tick.errors.filter((e) => e.queue === "broken").map((e) => e.step)
    expect(brokenSteps).toEqual(["forward", "recover", "janitor"])
    expect(tick.errors.every((e) => e.message.includes(`"broken"`))).toBe(true)
    for (const q of healthy) expect(await redis.llen(queueKeys(q).pending)).toBe(2)
  })
})

describe("drain", () => {
  it("runs every healthy task and lists the broken queue", async () => {
    await runNow(enqueueEach(2, { maxRetry: 0 }))
    await breakKey("pending")
    const ran: Array<string> = []
    const s = await runNow(
      Effect.flatMap(
        Effect.clockWith((clock) => clock.currentTimeMillis),
        (now) =>
          drain(
            {
              queues: ["iso-a", "broken", "iso-b"],
              concurrency: 2,
              handler: async (task) => void ran.push(task.queue)
            },
            now + 60_000
          )
      )
    )
    expect(s).toMatchObject({ succeeded: 4, archived: 0, retried: 0, stoppedBecause: "empty" })
    expect(s.failedQueues.map((f) => f.queue)).toEqual(["broken"])
    expect(ran.sort()).toEqual(["iso-a", "iso-a", "iso-b", "iso-b"])
  })
})

describe("Server", () => {
  it("processes every healthy task (none archived, none failed) while a broken queue is listed", async () => {
    await breakKey("pending")
    await redis.sadd("asynq:queues", "broken")
    const ids = await runNow(
      Effect.forEach(
        healthy.flatMap((q) => Array.from({ length: 15 }, () => q)),
        (queue, i) => Effect.map(enqueue("job", { i }, { queue, maxRetry: 0 }), (info) => info.id)
      )
    )
    const seen = new Set<string>()
    // More slots than tasks: every fetch wants more than the healthy queues hold, so it visits the broken queue too.
    const srv = await startServer(
      { job: async (task) => void seen.add(task.id) },
      { concurrency: 40, queues: { "iso-a": 1, broken: 1, "iso-b": 1 }, pollIntervalMs: 50, shutdownTimeoutMs: 1000 }
    )
    try {
      await waitFor(
        "every healthy task to run",
        () => seen.size,
        (n) => n === 30
      )
      expect([...seen].sort()).toEqual([...ids].sort())
      for (const q of healthy) {
        const k = queueKeys(q)
        expect(await redis.zcard(k.archived)).toBe(0)
        expect(await redis.zcard(k.retry)).toBe(0)
        expect(await redis.get(k.failedTotal)).toBeNull()
      }
    } finally {
      await srv.shutdown()
    }
  })
})
