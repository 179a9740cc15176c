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
import { holdQueueScript } from "../../src/broker/holdQueue.js"
import { runScript } from "../../src/broker/script.js"
import { deleteTask } from "../../src/inspector/taskActions.js"
import { dequeueLease } from "../../src/steps/dequeueLease.js"
import { enqueueKeepLast } from "../../src/steps/enqueueKeepLast.js"
import { setQueueLimit } from "../../src/steps/queueLimit.js"
import { requeue } from "../../src/steps/requeue.js"

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

  it("leaves no key of the queue's flow control: per-key lists, ring, running sets, rates, keep-last, limit and hold", async () => {
    const q = "flowq"
    const keyed = (key: string, n: number) =>
      Effect.forEach(Array.from({ length: n }), (_, i) =>
        enqueue("t", { i }, { queue: q, limitKey: key, taskId: `${key}-${i}` })
      )
    await h.run(keyed("a", 3), now)
    await h.run(keyed("b", 1), now)
    await h.run(keyed("c", 1), now)
    await h.run(
      setQueueLimit(q, { rate: { limit: 100, per: "1s" }, perKey: { rate: { limit: 1, per: "1m" }, concurrency: 2 } })
    )
    // One task of each key leased (the keys' running sets and rate states), then given back: the
    // running sets keep their stale ids.
    const leased = await h.run(dequeueLease({ queues: [q], count: 3 }), now)
    expect(leased.tasks).toHaveLength(3)
    await h.run(
      Effect.forEach(leased.tasks, (t) => requeue(t.msg)),
      now
    )
    // Key "c": its only task deleted by an operator; the next lease drops the key from the ring,
    // but its rate state lives on (a key no ring names).
    await h.run(deleteTask(q, "c-0"), now)
    const again = await h.run(dequeueLease({ queues: [q], count: 10 }), now + 61_000)
    await h.run(
      Effect.forEach(again.tasks, (t) => requeue(t.msg)),
      now + 61_000
    )
    expect(await c.zscore(`asynq:{${q}}:lkeys`, "c")).toBeNull()
    expect(await c.exists(`asynq:{${q}}:lkt:c`)).toBe(1)
    // Keep-last: a current task and a waiting one.
    await h.run(enqueueKeepLast("kl", { v: 1 }, { key: "push:1" }, { queue: q }), now)
    await h.run(enqueueKeepLast("kl", { v: 2 }, { key: "push:1" }, { queue: q }), now)
    // A hold (RateLimited with holdQueue).
    await h.run(runScript(holdQueueScript, { queue: q, untilMs: now + 120_000 }))
    for (const suffix of ["lkeys", "lk:a", "lka:a", "lkt:a", "lkt:c", "keeplast:push:1", "flow"])
      expect(await c.exists(`asynq:{${q}}:${suffix}`), suffix).toBe(1)

    await h.run(deleteQueue(q, { force: true, batchSize: 2 }), now + 61_000)
    expect(await c.keys(`*{${q}}*`)).toEqual([])
    expect(await c.sismember("asynq:queues", q)).toBe(0)
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
