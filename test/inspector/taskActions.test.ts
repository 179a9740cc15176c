import { describe, expect, it } from "vitest"
import { archiveTask, deleteTask, runTask } from "../../src/inspector/taskActions.js"
import {
  asynqMsg,
  putActive,
  putAggregating,
  putInZset,
  putPending,
  putUniqueLock,
  restoreSnapshot
} from "../support/asynqLayout.js"
import { inspectorTestDb, now, nowSec } from "./harness.js"

const { h, c } = inspectorTestDb()

describe("runTask", () => {
  it("moves scheduled, retry, archived and aggregating tasks to the head of pending", async () => {
    await putPending(c, asynqMsg("default", "already"), now - 1000)
    await putInZset(c, asynqMsg("default", "s"), "scheduled", nowSec + 600)
    await putInZset(c, asynqMsg("default", "x"), "archived", nowSec - 60)
    await putAggregating(c, asynqMsg("default", "g"), "solo", nowSec)
    expect(await h.run(runTask("default", "s"), now)).toEqual({ id: "s", from: "scheduled" })
    expect(await h.run(runTask("default", "x"), now)).toEqual({ id: "x", from: "archived" })
    expect(await h.run(runTask("default", "g"), now)).toEqual({ id: "g", from: "aggregating" })
    expect(await c.lrange("asynq:{default}:pending", 0, -1)).toEqual(["g", "x", "s", "already"])
    expect(await c.hgetall("asynq:{default}:t:s")).toMatchObject({
      state: "pending",
      pending_since: (BigInt(now) * 1_000_000n).toString()
    })
    expect(await c.zcard("asynq:{default}:scheduled")).toBe(0)
    expect(await c.zcard("asynq:{default}:archived")).toBe(0)
    // the emptied group is gone from the groups set
    expect(await c.sismember("asynq:{default}:groups", "solo")).toBe(0)
  })

  it("runs the retry task Go asynq wrote (e-retry)", async () => {
    await restoreSnapshot(c, "e-retry")
    await h.run(runTask("default", "e-flaky"))
    expect(await c.lrange("asynq:{default}:pending", 0, -1)).toEqual(["e-flaky"])
    expect(await c.hget("asynq:{default}:t:e-flaky", "state")).toBe("pending")
  })

  it("refuses pending and active tasks with a clear message, changing nothing", async () => {
    await putPending(c, asynqMsg("default", "p"), now)
    await putActive(c, asynqMsg("default", "a"), nowSec + 30)
    const p = await h.fail(runTask("default", "p"))
    expect(p).toMatchObject({ _tag: "InvalidState" })
    expect(p.message).toContain("already pending")
    const a = await h.fail(runTask("default", "a"))
    expect(a.message).toContain("already running")
    expect(await c.lrange("asynq:{default}:pending", 0, -1)).toEqual(["p"])
    expect(await c.lrange("asynq:{default}:active", 0, -1)).toEqual(["a"])
  })

  it("fails with TaskNotFound and QueueNotFound", async () => {
    await c.sadd("asynq:queues", "default")
    expect(await h.fail(runTask("default", "ghost"))).toMatchObject({ _tag: "TaskNotFound", id: "ghost" })
    expect(await h.fail(runTask("other", "ghost"))).toMatchObject({ _tag: "QueueNotFound", queue: "other" })
  })
})

describe("archiveTask", () => {
  it("archives pending, scheduled and aggregating tasks with score = now", async () => {
    await putPending(c, asynqMsg("default", "p"), now)
    await putInZset(c, asynqMsg("default", "r"), "retry", nowSec + 20)
    await putAggregating(c, asynqMsg("default", "g1"), "grp", nowSec)
    await putAggregating(c, asynqMsg("default", "g2"), "grp", nowSec)
    for (const id of ["p", "r", "g1"]) await h.run(archiveTask("default", id), now)
    expect(await c.zrange("asynq:{default}:archived", "0", "-1", "WITHSCORES")).toEqual([
      "g1",
      String(nowSec),
      "p",
      String(nowSec),
      "r",
      String(nowSec)
    ])
    expect(await c.llen("asynq:{default}:pending")).toBe(0)
    expect(await c.hgetall("asynq:{default}:t:p")).not.toHaveProperty("pending_since")
    expect(await c.hget("asynq:{default}:t:p", "state")).toBe("archived")
    expect(await c.sismember("asynq:{default}:groups", "grp")).toBe(1)
  })

  it("refuses active and archived tasks", async () => {
    await putActive(c, asynqMsg("default", "a"), nowSec + 30)
    await putInZset(c, asynqMsg("default", "x"), "archived", nowSec)
    expect((await h.fail(archiveTask("default", "a"))).message).toContain("cancel it instead")
    expect((await h.fail(archiveTask("default", "x"))).message).toContain("already archived")
  })

  it("trims the archive to asynq's limits, deleting trimmed hashes", async () => {
    const old = nowSec - 91 * 24 * 3600
    await putInZset(c, asynqMsg("default", "ancient"), "archived", old)
    await putPending(c, asynqMsg("default", "p"), now)
    await h.run(archiveTask("default", "p"), now)
    expect(await c.zrange("asynq:{default}:archived", "0", "-1")).toEqual(["p"])
    expect(await c.exists("asynq:{default}:t:ancient")).toBe(0)
  })
})

describe("deleteTask", () => {
  it("deletes a task in any non-active state and releases its uniqueness lock", async () => {
    await putInZset(c, asynqMsg("default", "s"), "scheduled", nowSec + 60)
    await putUniqueLock(c, "default", "s", "asynq:{default}:unique:email:send:abc")
    await putPending(c, asynqMsg("default", "p"), now)
    expect(await h.run(deleteTask("default", "s"))).toEqual({ id: "s", from: "scheduled" })
    expect(await h.run(deleteTask("default", "p"))).toEqual({ id: "p", from: "pending" })
    expect(await c.exists("asynq:{default}:t:s", "asynq:{default}:t:p", "asynq:{default}:unique:email:send:abc")).toBe(
      0
    )
    expect(await c.zcard("asynq:{default}:scheduled")).toBe(0)
    expect(await c.llen("asynq:{default}:pending")).toBe(0)
  })

  it("keeps a lock another task holds now", async () => {
    await putInZset(c, asynqMsg("default", "s"), "scheduled", nowSec + 60)
    await putUniqueLock(c, "default", "s", "asynq:{default}:unique:k")
    await c.set("asynq:{default}:unique:k", "someone-else")
    await h.run(deleteTask("default", "s"))
    expect(await c.get("asynq:{default}:unique:k")).toBe("someone-else")
  })

  it("deletes what Go asynq wrote with a unique lock (c-unique)", async () => {
    await restoreSnapshot(c, "c-unique")
    const lock = await c.hget("asynq:{default}:t:c-unique", "unique_key")
    expect(lock).toBeTruthy()
    await h.run(deleteTask("default", "c-unique"))
    expect(await c.exists(lock!)).toBe(0)
    expect(await c.lrange("asynq:{default}:pending", 0, -1)).not.toContain("c-unique")
  })

  it("refuses an active task", async () => {
    await restoreSnapshot(c, "h-server-running")
    const e = await h.fail(deleteTask("default", "h-active"))
    expect(e).toMatchObject({ _tag: "InvalidState" })
    expect(e.message).toBe('task "h-active" is active (running) and cannot be deleted; cancel it first')
    expect(await c.exists("asynq:{default}:t:h-active")).toBe(1)
  })
})
