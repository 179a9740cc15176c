import { describe, expect, it } from "vitest"
import { servers } from "../../src/inspector/servers.js"
import { schedulerEntries, schedulerHistory } from "../../src/inspector/scheduler.js"
import { encodeSchedulerEnqueueEvent } from "../../src/wire/SchedulerEnqueueEvent.js"
import { timestampFromMillis } from "../../src/wire/Timestamp.js"
import { restoreSnapshot } from "../support/asynqLayout.js"
import { inspectorTestDb } from "./harness.js"

const { h, c } = inspectorTestDb()

describe("servers", () => {
  it("reads the running Go asynq server and its worker (h-server-running)", async () => {
    const snap = await restoreSnapshot(c, "h-server-running")
    const list = await h.run(servers(), snap.now_unix * 1000)
    expect(list).toHaveLength(1)
    const s = list[0]!
    expect(s).toMatchObject({
      id: "vm:25483:e6c0709d-149b-46dd-a6e5-f71ae85ea757",
      host: "vm",
      pid: 25483,
      concurrency: 4,
      queues: { critical: 6, default: 3, low: 1 },
      strictPriority: false,
      status: "active"
    })
    expect(s.started.getTime()).toBe(1795324740520)
    expect(s.activeWorkers).toHaveLength(1)
    const w = s.activeWorkers[0]!
    expect(w).toMatchObject({ taskId: "h-active", taskType: "slow:job", queue: "default" })
    expect(Buffer.from(w.taskPayload!).toString()).toBe('{"n":1}')
    expect(w.deadline.getTime() - w.started.getTime()).toBe(600_000)
  })

  it("leaves out servers whose heartbeat expired", async () => {
    const snap = await restoreSnapshot(c, "h-server-running")
    expect(await h.run(servers(), (snap.now_unix + 60) * 1000)).toEqual([])
  })
})

describe("scheduler entries and history", () => {
  it("reads Go asynq's scheduler entries, soonest first, never-run entry without prev (i-scheduler)", async () => {
    const snap = await restoreSnapshot(c, "i-scheduler")
    const entries = await h.run(schedulerEntries(), snap.now_unix * 1000)
    expect(entries.map((e) => [e.spec, e.taskType, e.next.getTime() / 1000, e.prev?.getTime()])).toEqual([
      ["*/5 * * * *", "sched:report", 1795324800, undefined],
      ["@every 30s", "sched:ping", 1795324806, 1795324776000]
    ])
    expect(entries[0]!.options).toEqual(['Queue("low")', "Unique(1h0m0s)"])
    expect(entries[0]!.taskPayload).toBeUndefined()
    expect(await h.run(schedulerEntries(), (snap.now_unix + 3600) * 1000)).toEqual([])
  })

  it("lists an entry's enqueue history newest first, paged", async () => {
    await restoreSnapshot(c, "i-scheduler")
    const id = "9d219247-c7f9-4d1e-98c6-41f13590cef2"
    const [ev] = await h.run(schedulerHistory(id))
    expect(ev).toEqual({ taskId: "938d17eb-54ea-4b6b-bc95-f5bbc1181e1b", enqueuedAt: new Date(1795324776001) })
    for (let i = 1; i <= 4; i++) {
      const ms = 1795324776000 + i * 30_000
      await c.zadd(
        `asynq:scheduler_history:${id}`,
        ms / 1000,
        Buffer.from(encodeSchedulerEnqueueEvent({ taskId: `t${i}`, enqueueTime: timestampFromMillis(ms) }))
      )
    }
    expect((await h.run(schedulerHistory(id, { pageSize: 2 }))).map((e) => e.taskId)).toEqual(["t4", "t3"])
    expect((await h.run(schedulerHistory(id, { page: 3, pageSize: 2 }))).map((e) => e.taskId)).toEqual([
      "938d17eb-54ea-4b6b-bc95-f5bbc1181e1b"
    ])
    expect(await h.run(schedulerHistory("unknown-entry"))).toEqual([])
    expect(await h.fail(schedulerHistory(id, { page: 0 }))).toMatchObject({ _tag: "InvalidArgument" })
  })
})
