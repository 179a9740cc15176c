import { describe, expect, it } from "vitest"
import { archiveAll, deleteAll, runAll } from "../../src/inspector/bulkActions.js"
import type { BulkProgress } from "../../src/inspector/types.js"
import {
  asynqMsg,
  putAggregating,
  putInZset,
  putPending,
  putUniqueLock,
  restoreSnapshot
} from "../support/asynqLayout.js"
import { inspectorTestDb, now, nowSec } from "./harness.js"

const { h, c } = inspectorTestDb()

const fillPending = async (n: number) => {
  const p = c.pipeline()
  for (let i = 0; i < n; i++) {
    p.hset(`asynq:{default}:t:p${i}`, "msg", Buffer.from("x"), "state", "pending", "pending_since", "1")
    p.lpush("asynq:{default}:pending", `p${i}`)
  }
  p.sadd("asynq:queues", "default")
  await p.exec()
}

describe("bulk actions", () => {
  it("deletes a large pending list in bounded batches, reporting progress", async () => {
    await fillPending(2500)
    const seen: Array<BulkProgress> = []
    const n = await h.run(deleteAll("default", "pending", { batchSize: 1000, onProgress: (p) => seen.push(p) }))
    expect(n).toBe(2500)
    expect(seen).toEqual([
      { done: 1000, total: 2500 },
      { done: 2000, total: 2500 },
      { done: 2500, total: 2500 }
    ])
    expect(await c.llen("asynq:{default}:pending")).toBe(0)
    expect(await c.exists("asynq:{default}:t:p0", "asynq:{default}:t:p2499")).toBe(0)
  })

  it("runs all retry tasks to pending, lowest score first", async () => {
    await putInZset(c, asynqMsg("default", "r2"), "retry", nowSec + 20)
    await putInZset(c, asynqMsg("default", "r1"), "retry", nowSec + 10)
    await putInZset(c, asynqMsg("default", "r3"), "retry", nowSec + 30)
    expect(await h.run(runAll("default", "retry", { batchSize: 2 }), now)).toBe(3)
    // LPUSH in score order: the lowest score sits at the tail and is dequeued first
    expect(await c.lrange("asynq:{default}:pending", 0, -1)).toEqual(["r3", "r2", "r1"])
    expect(await c.hget("asynq:{default}:t:r1", "state")).toBe("pending")
    expect(await c.exists("asynq:{default}:retry")).toBe(0)
  })

  it("archives all pending and all tasks of one group", async () => {
    await putPending(c, asynqMsg("default", "p1"), now)
    await putPending(c, asynqMsg("default", "p2"), now)
    await putAggregating(c, asynqMsg("default", "g1"), "grp", nowSec)
    await putAggregating(c, asynqMsg("default", "other"), "keep", nowSec)
    expect(await h.run(archiveAll("default", "pending"), now)).toBe(2)
    expect(await h.run(archiveAll("default", "aggregating", { group: "grp" }), now)).toBe(1)
    expect(await c.zrange("asynq:{default}:archived", "0", "-1")).toEqual(["g1", "p1", "p2"])
    expect(await c.smembers("asynq:{default}:groups")).toEqual(["keep"])
    expect(await c.hget("asynq:{default}:t:g1", "state")).toBe("archived")
  })

  it("archive all reports the older archived tasks the archive's limits removed (trimmed)", async () => {
    await putInZset(c, asynqMsg("default", "ancient"), "archived", nowSec - 91 * 86_400)
    await putPending(c, asynqMsg("default", "p1"), now)
    await putPending(c, asynqMsg("default", "p2"), now)
    const seen: Array<BulkProgress> = []
    expect(await h.run(archiveAll("default", "pending", { batchSize: 1, onProgress: (p) => seen.push(p) }), now)).toBe(
      2
    )
    expect(seen).toEqual([
      { done: 1, total: 2, trimmed: 1 },
      { done: 2, total: 2, trimmed: 1 }
    ])
    expect(await c.exists("asynq:{default}:t:ancient")).toBe(0)
    expect(await c.zrange("asynq:{default}:archived", "0", "-1")).toEqual(["p1", "p2"])
  })

  it("runs and deletes a group Go asynq wrote (d-group)", async () => {
    await restoreSnapshot(c, "d-group")
    expect(await h.run(runAll("default", "aggregating", { group: "g1" }))).toBe(3)
    expect(await c.llen("asynq:{default}:pending")).toBe(3)
    expect(await c.smembers("asynq:{default}:groups")).toEqual(["g2"])
    expect(await h.run(deleteAll("default", "aggregating", { group: "g2" }))).toBe(1)
    expect(await c.exists("asynq:{default}:groups", "asynq:{default}:g:g2", "asynq:{default}:t:d-g2-unique")).toBe(0)
  })

  it("deleteAll releases uniqueness locks the tasks hold", async () => {
    await putInZset(c, asynqMsg("default", "x"), "archived", nowSec)
    await putUniqueLock(c, "default", "x", "asynq:{default}:unique:t:1")
    expect(await h.run(deleteAll("default", "archived"))).toBe(1)
    expect(await c.exists("asynq:{default}:unique:t:1")).toBe(0)
  })

  it("returns 0 for an empty state", async () => {
    await c.sadd("asynq:queues", "default")
    expect(await h.run(deleteAll("default", "completed"))).toBe(0)
  })

  it("rejects states that do not fit the operation, a missing group, bad batch sizes", async () => {
    await c.sadd("asynq:queues", "default")
    const e = await h.fail(runAll("default", "pending"))
    expect(e).toMatchObject({ _tag: "InvalidArgument", field: "state" })
    expect(e.message).toBe(
      "cannot run all pending tasks; run all works on scheduled, retry, archived, aggregating tasks"
    )
    expect((await h.fail(deleteAll("default", "active"))).message).toContain("cannot delete all active tasks")
    expect(await h.fail(archiveAll("default", "aggregating"))).toMatchObject({ field: "group" })
    expect(await h.fail(deleteAll("default", "pending", { batchSize: 0 }))).toMatchObject({ field: "batchSize" })
    expect(await h.fail(deleteAll("nope", "pending"))).toMatchObject({ _tag: "QueueNotFound" })
  })
})
