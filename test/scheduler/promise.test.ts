import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPeriodicTaskManager, createScheduler } from "../../src/scheduler/promise.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { pendingIds } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("Promise facade (real Redis, real time)", () => {
  it("createScheduler: register before start, runs, rejects bad entries with typed errors, shuts down cleanly", async () => {
    const posted: Array<string> = []
    const s = createScheduler({
      redis: { url: testRedisUrl() },
      id: "promise-1",
      hooks: { postEnqueue: (r) => void posted.push(r.outcome) }
    })
    const id = await s.register({ spec: "@every 1s", type: "tick", payload: "hi", options: { queue: "pr1" } })
    await expect(
      s.register({ spec: "@every 1s", type: "tick", payload: "hi", options: { queue: "pr1" } })
    ).rejects.toMatchObject({ _tag: "DuplicateEntry", entryId: id })
    await expect(s.register({ spec: "5 4 * *", type: "x" })).rejects.toMatchObject({
      _tag: "InvalidCronSpec",
      message: 'invalid cron spec "5 4 * *": expected 5 fields (minute hour day-of-month month day-of-week), got 4'
    })
    await expect(s.register({ spec: "@daily", type: "x", timeZone: "Europe/Nowhere" })).rejects.toMatchObject({
      _tag: "InvalidTimeZone"
    })
    await expect(s.unregister("nope")).rejects.toMatchObject({ _tag: "EntryNotFound" })
    expect((await s.entries()).map((e) => e.id)).toEqual([id])

    await s.start()
    await expect(s.start()).rejects.toMatchObject({ _tag: "SchedulerNotRunning" })
    await waitFor(
      "two postEnqueue calls with outcome enqueued",
      () => posted,
      (outcomes) => outcomes.filter((p) => p === "enqueued").length >= 2
    )
    // The hook runs after the write; wait on the tasks themselves all the same, so this reads what
    // Redis holds rather than relying on the order of two observations.
    await waitFor(
      "two tasks pending in pr1",
      () => pendingIds(c, "pr1"),
      (ids) => ids.length >= 2
    )
    expect((await pendingIds(c, "pr1")).length).toBeGreaterThanOrEqual(2)
    expect((await s.lastTick())?.errors).toEqual([])
    await waitFor(
      "the scheduler's published entries",
      () => c.exists("asynq:schedulers:{promise-1}"),
      (n) => n === 1
    )

    // The facade runs on its own runtime and the real clock (no TestClock reaches it). To show that
    // an unregistered entry stops, a second entry on the same period is the witness: once it has
    // enqueued again, ticks went on; the unregistered entry must not have enqueued meanwhile.
    await s.register({ spec: "@every 1s", type: "witness", options: { queue: "pr1w" } })
    await s.unregister(id)
    const n = (await pendingIds(c, "pr1")).length
    const w0 = (await pendingIds(c, "pr1w")).length
    await waitFor(
      "the witness entry to enqueue once more",
      () => pendingIds(c, "pr1w"),
      (ids) => ids.length >= w0 + 1
    )
    const m = (await pendingIds(c, "pr1")).length
    expect(m).toBeLessThanOrEqual(n + 1) // at most one tick that was already under way
    await waitFor(
      "the witness entry to enqueue twice more",
      () => pendingIds(c, "pr1w"),
      (ids) => ids.length >= w0 + 3
    )
    expect((await pendingIds(c, "pr1")).length).toBe(m)

    await s.shutdown()
    await s.shutdown()
    expect(await c.exists("asynq:schedulers:{promise-1}")).toBe(0)
    expect(await c.zscore("asynq:schedulers", "asynq:schedulers:{promise-1}")).toBeNull()
    await expect(s.register({ spec: "@every 1s", type: "late" })).rejects.toMatchObject({ _tag: "SchedulerNotRunning" })
  })

  it("createScheduler: start rejects when Redis is unreachable", async () => {
    const s = createScheduler({ redis: { url: "redis://127.0.0.1:1", connectTimeoutMs: 500 } })
    await expect(s.start()).rejects.toMatchObject({ _tag: "RedisConnectionError" })
  })

  it("createPeriodicTaskManager: syncs from a Promise provider", async () => {
    let configs = [{ spec: "@every 1s", type: "managed", options: { queue: "pr2" } }]
    const m = createPeriodicTaskManager({
      redis: { url: testRedisUrl() },
      provider: { getConfigs: async () => configs },
      id: "promise-2"
    })
    await expect(m.sync()).rejects.toMatchObject({ _tag: "SchedulerNotRunning" })
    await m.start()
    await waitFor(
      "a task pending in pr2",
      () => pendingIds(c, "pr2"),
      (ids) => ids.length >= 1
    )
    configs = []
    expect((await m.sync()).removed).toHaveLength(1)
    expect(await m.entries()).toEqual([])
    await m.shutdown()
  })
})
