import { describe, expect, it } from "vitest"
import { listTasks } from "../../src/inspector/listTasks.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { asynqMsg, putActive, putAggregating, putInZset, putPending, restoreSnapshot } from "../support/asynqLayout.js"
import { inspectorTestDb, now, nowSec } from "./harness.js"

const { h, c } = inspectorTestDb()

describe("listTasks", () => {
  it("pages pending tasks oldest first (the order workers take them)", async () => {
    for (let i = 1; i <= 7; i++) await putPending(c, asynqMsg("default", `p${i}`), now - (10 - i) * 1000)
    const ids = async (page: number) =>
      (await h.run(listTasks("default", "pending", { page, pageSize: 3 }), now)).map((t) => t.id)
    expect(await ids(1)).toEqual(["p1", "p2", "p3"])
    expect(await ids(2)).toEqual(["p4", "p5", "p6"])
    expect(await ids(3)).toEqual(["p7"])
    expect(await ids(4)).toEqual([])
    const [first] = await h.run(listTasks("default", "pending"), now)
    expect(first).toMatchObject({
      id: "p1",
      queue: "default",
      type: "email:send",
      state: "pending",
      maxRetry: 25,
      timeoutMs: 1_800_000,
      isOrphaned: false
    })
    expect(first!.nextProcessAt?.getTime()).toBe(now)
    expect(Buffer.from(first!.payload!).toString()).toBe('{"id":"p1"}')
  })

  it("defaults to asynq's page size of 30", async () => {
    for (let i = 0; i < 35; i++) await putPending(c, asynqMsg("default", `t${i}`), now)
    expect(await h.run(listTasks("default", "pending"), now)).toHaveLength(30)
  })

  it("marks active tasks whose lease ran out as orphaned", async () => {
    await putActive(c, asynqMsg("default", "alive"), nowSec + 20)
    await putActive(c, asynqMsg("default", "dead"), nowSec - 1)
    const tasks = await h.run(listTasks("default", "active"), now)
    expect(tasks.map((t) => [t.id, t.state, t.isOrphaned])).toEqual([
      ["alive", "active", false],
      ["dead", "active", true]
    ])
  })

  it("shows the exact due time (to the millisecond) that effect-asynq keeps in due_ms, and ignores an entry that disagrees with the zset", async () => {
    const dueMs = "asynq:{default}:due_ms"
    await putInZset(c, asynqMsg("default", "exact"), "scheduled", nowSec + 61) // written by us: due at +60.25 s, rounded up
    await c.zadd(dueMs, String(now + 60_250), "exact")
    await putInZset(c, asynqMsg("default", "moved-by-go"), "retry", nowSec + 90) // a Go server re-scored it: the old entry is stale
    await c.zadd(dueMs, String(now + 30_500), "moved-by-go")
    const [exact] = await h.run(listTasks("default", "scheduled"), now)
    expect(exact!.nextProcessAt!.getTime()).toBe(now + 60_250)
    expect((await h.run(getTaskInfo("default", "exact"), now)).nextProcessAt!.getTime()).toBe(now + 60_250)
    const [stale] = await h.run(listTasks("default", "retry"), now)
    expect(stale!.nextProcessAt!.getTime()).toBe((nowSec + 90) * 1000)
    expect((await h.run(getTaskInfo("default", "moved-by-go"), now)).nextProcessAt!.getTime()).toBe(
      (nowSec + 90) * 1000
    )
  })

  it("lists zset states by ascending score with nextProcessAt for scheduled and retry", async () => {
    await putInZset(c, asynqMsg("default", "late"), "scheduled", nowSec + 900)
    await putInZset(c, asynqMsg("default", "soon"), "scheduled", nowSec + 60)
    await putInZset(
      c,
      asynqMsg("default", "r", { retried: 2, errorMsg: "boom", lastFailedAt: nowSec - 10 }),
      "retry",
      nowSec + 30
    )
    await putInZset(
      c,
      asynqMsg("default", "done", { retention: 3600, completedAt: nowSec }),
      "completed",
      nowSec + 3600,
      { result: Buffer.from("ok") }
    )
    const scheduled = await h.run(listTasks("default", "scheduled"), now)
    expect(scheduled.map((t) => [t.id, t.nextProcessAt?.getTime()])).toEqual([
      ["soon", (nowSec + 60) * 1000],
      ["late", (nowSec + 900) * 1000]
    ])
    const [retry] = await h.run(listTasks("default", "retry"), now)
    expect(retry).toMatchObject({ id: "r", retried: 2, lastErr: "boom", state: "retry" })
    expect(retry!.lastFailedAt?.getTime()).toBe((nowSec - 10) * 1000)
    const [completed] = await h.run(listTasks("default", "completed"), now)
    expect(completed).toMatchObject({
      id: "done",
      state: "completed",
      retentionMs: 3_600_000,
      nextProcessAt: undefined
    })
    expect(Buffer.from(completed!.result!).toString()).toBe("ok")
  })

  it("lists a group's aggregating tasks and needs the group name", async () => {
    await putAggregating(c, asynqMsg("default", "a"), "batch", nowSec)
    await putAggregating(c, asynqMsg("default", "b"), "batch", nowSec + 1)
    const tasks = await h.run(listTasks("default", "aggregating", { group: "batch" }))
    expect(tasks.map((t) => [t.id, t.group, t.state])).toEqual([
      ["a", "batch", "aggregating"],
      ["b", "batch", "aggregating"]
    ])
    expect(await h.fail(listTasks("default", "aggregating"))).toMatchObject({ _tag: "InvalidArgument", field: "group" })
  })

  it("skips a task whose msg is corrupt instead of failing the page", async () => {
    await putPending(c, asynqMsg("default", "good"), now)
    await c.hset("asynq:{default}:t:bad", "msg", Buffer.from([0xff, 0xff, 0xff]), "state", "pending")
    await c.lpush("asynq:{default}:pending", "bad")
    expect((await h.run(listTasks("default", "pending"))).map((t) => t.id)).toEqual(["good"])
  })

  it("rejects bad paging and unknown queues", async () => {
    await c.sadd("asynq:queues", "default")
    expect(await h.fail(listTasks("default", "pending", { page: 0 }))).toMatchObject({
      _tag: "InvalidArgument",
      field: "page"
    })
    expect(await h.fail(listTasks("default", "pending", { pageSize: -1 }))).toMatchObject({
      _tag: "InvalidArgument",
      field: "pageSize"
    })
    expect(await h.fail(listTasks("nope", "pending"))).toMatchObject({ _tag: "QueueNotFound" })
  })

  it("lists what Go asynq wrote: a-enqueue, b-scheduled, f-archived, g-completed, h-active", async () => {
    const a = await restoreSnapshot(c, "a-enqueue")
    const pending = await h.run(listTasks("default", "pending"), a.now_unix * 1000)
    const lpushOrder = a.keys["asynq:{default}:pending"]!.value as Array<string>
    expect(pending.map((t) => t.id)).toEqual([...lpushOrder].reverse())
    expect(pending.find((t) => t.id === "a-email-1")).toBeDefined()

    const b = await restoreSnapshot(c, "b-scheduled")
    const [reminder] = await h.run(listTasks("default", "scheduled"), b.now_unix * 1000)
    expect(reminder!.id).toBe("b-reminder")
    expect(reminder!.nextProcessAt!.getTime() / 1000).toBeCloseTo(b.now_unix + 600, -1)
    const [at] = await h.run(listTasks("low", "scheduled"))
    expect(at!.nextProcessAt!.getTime()).toBe(1893456000 * 1000)

    await restoreSnapshot(c, "f-skipretry-archived")
    const [skipped] = await h.run(listTasks("default", "archived"))
    expect(skipped).toMatchObject({
      id: "f-skip",
      state: "archived",
      lastErr: "invalid input: skip retry for the task",
      retried: 0
    })

    await restoreSnapshot(c, "g-completed")
    const [kept] = await h.run(listTasks("default", "completed"))
    expect(kept).toMatchObject({ id: "g-retained", state: "completed", retentionMs: 3_600_000 })
    expect(kept!.result).toBeDefined()
    expect(kept!.completedAt).toBeInstanceOf(Date)

    const hs = await restoreSnapshot(c, "h-server-running")
    const [running] = await h.run(listTasks("default", "active"), hs.now_unix * 1000)
    expect(running).toMatchObject({ id: "h-active", type: "slow:job", isOrphaned: false, timeoutMs: 600_000 })
    const [expired] = await h.run(listTasks("default", "active"), (hs.now_unix + 120) * 1000)
    expect(expired!.isOrphaned).toBe(true)
  })
})

describe("getTaskInfo", () => {
  it("returns one task in each state Go asynq wrote", async () => {
    await restoreSnapshot(c, "e-retry")
    const retry = await h.run(getTaskInfo("default", "e-flaky"))
    const score = (await c.zscore("asynq:{default}:retry", "e-flaky"))!
    expect(retry).toMatchObject({ id: "e-flaky", state: "retry", retried: 1, lastErr: "boom" })
    expect(retry.nextProcessAt!.getTime()).toBe(Number(score) * 1000)

    await restoreSnapshot(c, "d-group")
    expect(await h.run(getTaskInfo("default", "d-g1-2"))).toMatchObject({ state: "aggregating", group: "g1" })

    await restoreSnapshot(c, "c-unique")
    expect(await h.run(getTaskInfo("default", "c-unique-scheduled"))).toMatchObject({ state: "scheduled" })
  })

  it("fails with TaskNotFound, QueueNotFound, and MessageDecodeError for a corrupt hash", async () => {
    await c.sadd("asynq:queues", "default")
    const nf = await h.fail(getTaskInfo("default", "missing"))
    expect(nf).toMatchObject({ _tag: "TaskNotFound", id: "missing", queue: "default" })
    expect(nf.message).toBe('task "missing" not found in queue "default"')
    expect(await h.fail(getTaskInfo("nope", "x"))).toMatchObject({ _tag: "QueueNotFound" })
    await c.hset("asynq:{default}:t:bad", "msg", Buffer.from([0x0a, 0x05, 0x61]), "state", "pending")
    expect(await h.fail(getTaskInfo("default", "bad"))).toMatchObject({ _tag: "MessageDecodeError" })
  })
})
