import { describe, expect, it } from "vitest"
import { Redis as IORedisClient } from "ioredis"
import { deleteQueue } from "../../src/inspector/deleteQueue.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { cancelProcessing, pauseQueue, unpauseQueue } from "../../src/inspector/control.js"
import type { BulkProgress } from "../../src/inspector/types.js"
import { asynqMsg, putActive, putAggregating, putInZset, putPending, restoreSnapshot } from "../support/asynqLayout.js"
import { inspectorTestDb, now, nowSec } from "./harness.js"
import { startRedisServer } from "../support/redis-server.js"
import { Effect } from "effect"
import type { Broker } from "../../src/broker/Broker.js"
import { brokerLayerAt } from "../support/arrange.js"

const { h, c } = inspectorTestDb()

const queueKeyCount = async (q: string) => (await c.keys(`asynq:{${q}}:*`)).length

describe("deleteQueue", () => {
  it("removes an empty queue: its keys and its name in asynq:queues", async () => {
    await c.sadd("asynq:queues", "empty", "other")
    await c.set("asynq:{empty}:paused", "1")
    // An idle effect-asynq worker's park (token and room) goes with the queue.
    await c.hset("asynq:{empty}:parked", "some-server", "1795796765.5")
    await c.hset("asynq:{empty}:parkroom", "some-server", "3")
    // An exact due time left behind by a task something else removed (effect-asynq's due_ms) goes too.
    await c.zadd("asynq:{empty}:due_ms", now + 400, "gone")
    await c.zadd("asynq:{empty}:handover", "1795796765000", "1795796765.5\n11\nsome-serverid")
    await h.run(deleteQueue("empty"))
    expect(await c.smembers("asynq:queues")).toEqual(["other"])
    expect(await queueKeyCount("empty")).toBe(0)
  })

  it("refuses a queue with tasks unless forced (QueueNotEmpty), and then deletes every task", async () => {
    await putPending(c, asynqMsg("work", "p"), now)
    await putInZset(c, asynqMsg("work", "s"), "scheduled", nowSec + 60)
    await putInZset(c, asynqMsg("work", "done"), "completed", nowSec + 60)
    await putAggregating(c, asynqMsg("work", "g"), "grp", nowSec)
    // A unique task: its lock must go with it (or the same task could not be enqueued again for the TTL).
    const unique = await h.run(enqueue("report", { day: 1 }, { queue: "work", unique: 3_600_000 }))
    expect(await c.keys("asynq:{work}:unique:*")).toHaveLength(1)
    const e = await h.fail(deleteQueue("work"))
    expect(e).toMatchObject({ _tag: "QueueNotEmpty", queue: "work", size: 5 })
    expect(e.message).toContain('queue "work" is not empty (5 task(s))')
    expect(await c.sismember("asynq:queues", "work")).toBe(1)
    expect(await c.exists("asynq:{work}:t:p")).toBe(1)

    const seen: Array<BulkProgress> = []
    const r = await h.run(deleteQueue("work", { force: true, batchSize: 3, onProgress: (p) => seen.push(p) }))
    expect(r).toEqual({ deletedTasks: 5 })
    expect(seen.at(-1)).toEqual({ done: 5, total: 5 })
    expect(await queueKeyCount("work")).toBe(0)
    expect(await c.sismember("asynq:queues", "work")).toBe(0)
    // The unique task can be enqueued again at once.
    expect((await h.run(enqueue("report", { day: 1 }, { queue: "work", unique: 3_600_000 }))).id).not.toBe(unique.id)
  })

  it("never deletes a queue with active tasks, even forced (Go asynq's h-server-running)", async () => {
    await restoreSnapshot(c, "h-server-running")
    const e = await h.fail(deleteQueue("default", { force: true }))
    expect(e).toMatchObject({ _tag: "InvalidState" })
    expect(e.message).toContain("1 active task(s)")
    expect(await c.exists("asynq:{default}:t:h-active")).toBe(1)
    await putActive(c, asynqMsg("default", "a2"), nowSec)
    expect(await h.fail(deleteQueue("default"))).toMatchObject({ _tag: "InvalidState" })
  })

  it("fails with QueueNotFound for an unknown queue", async () => {
    expect(await h.fail(deleteQueue("ghost", { force: true }))).toMatchObject({ _tag: "QueueNotFound" })
  })
})

describe("pause / unpause", () => {
  it("writes asynq's paused key (unix seconds) and removes it; refuses twice", async () => {
    await c.sadd("asynq:queues", "default")
    await h.run(pauseQueue("default"), now)
    expect(await c.get("asynq:{default}:paused")).toBe(String(nowSec))
    expect((await h.fail(pauseQueue("default"))).message).toContain("already paused")
    await h.run(unpauseQueue("default"))
    expect(await c.exists("asynq:{default}:paused")).toBe(0)
    expect((await h.fail(unpauseQueue("default"))).message).toContain("not paused")
  })

  it("refuses an unknown queue with QueueNotFound (a typo must not look done) and writes nothing", async () => {
    expect(await h.fail(pauseQueue("defualt"))).toMatchObject({ _tag: "QueueNotFound" })
    expect(await h.fail(unpauseQueue("defualt"))).toMatchObject({ _tag: "QueueNotFound" })
    expect(await c.exists("asynq:{defualt}:paused")).toBe(0)
  })

  it("unpauses the queue Go asynq paused (j-paused)", async () => {
    await restoreSnapshot(c, "j-paused")
    await h.run(unpauseQueue("default"))
    expect(await c.exists("asynq:{default}:paused")).toBe(0)
  })
})

describe("cancelProcessing", () => {
  // Pub/sub is server-wide (not per database), so this runs on a private server where the only
  // subscriber is the test's own.
  it("publishes the task id on asynq:cancel and says how many servers got it", async () => {
    const server = await startRedisServer()
    const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
      Effect.runPromise(eff.pipe(Effect.provide(brokerLayerAt({ url: server.url }))) as Effect.Effect<A>)
    try {
      const sub = new IORedisClient(server.url)
      const got = new Promise<string>((resolve) => sub.on("message", (_ch, msg) => resolve(msg)))
      await sub.subscribe("asynq:cancel")
      expect(await run(cancelProcessing("task-123"))).toEqual({ receivers: 1 })
      expect(await got).toBe("task-123")
      await sub.quit()
      expect(await run(cancelProcessing("task-456"))).toEqual({ receivers: 0 })
    } finally {
      await server.stop()
    }
  })
})
