import { describe, expect, it } from "vitest"
import { getQueueInfo } from "../../src/inspector/queueInfo.js"
import { queues } from "../../src/inspector/queues.js"
import { history } from "../../src/inspector/history.js"
import { groups } from "../../src/inspector/groups.js"
import { asynqMsg, putActive, putAggregating, putInZset, putPending, restoreSnapshot } from "../support/asynqLayout.js"
import { flushTestDb } from "../support/redis.js"
import { inspectorTestDb, now, nowSec } from "./harness.js"
import { holdQueueScript } from "../../src/broker/holdQueue.js"
import { runScript } from "../../src/broker/script.js"
import { setQueueLimit } from "../../src/inspector/control.js"
import { limitJson, queueSnapshot } from "../../adapters/dashboard/asynqmonJson.js"

const { h, c } = inspectorTestDb()

describe("queues", () => {
  it("lists the names in asynq:queues, sorted", async () => {
    await c.sadd("asynq:queues", "low", "critical", "default")
    expect(await h.run(queues())).toEqual(["critical", "default", "low"])
  })
  it("is empty on an empty Redis", async () => {
    expect(await h.run(queues())).toEqual([])
  })
})

describe("getQueueInfo", () => {
  it("counts every state, groups, today's and total counters, latency and memory", async () => {
    await putPending(c, asynqMsg("default", "p-old"), now - 90_000)
    await putPending(c, asynqMsg("default", "p-new"), now - 1_000)
    await putActive(c, asynqMsg("default", "a1"), nowSec + 30)
    await putInZset(c, asynqMsg("default", "s1"), "scheduled", nowSec + 600)
    await putInZset(c, asynqMsg("default", "r1"), "retry", nowSec + 20)
    await putInZset(c, asynqMsg("default", "r2"), "retry", nowSec + 40)
    await putInZset(c, asynqMsg("default", "x1"), "archived", nowSec - 5)
    await putInZset(c, asynqMsg("default", "c1"), "completed", nowSec + 3600)
    await putAggregating(c, asynqMsg("default", "g1a"), "g1", nowSec)
    await putAggregating(c, asynqMsg("default", "g1b"), "g1", nowSec)
    await putAggregating(c, asynqMsg("default", "g2a"), "g2", nowSec)
    await c.set("asynq:{default}:processed:2026-11-22", "7")
    await c.set("asynq:{default}:failed:2026-11-22", "2")
    await c.set("asynq:{default}:processed:2026-11-21", "100")
    await c.set("asynq:{default}:processed", "1234")
    await c.set("asynq:{default}:failed", "56")
    const info = await h.run(getQueueInfo("default"), now)
    expect(info).toMatchObject({
      queue: "default",
      pending: 2,
      active: 1,
      scheduled: 1,
      retry: 2,
      archived: 1,
      completed: 1,
      aggregating: 3,
      groups: 2,
      size: 11,
      processed: 7,
      failed: 2,
      processedTotal: 1234,
      failedTotal: 56,
      paused: false,
      latencyMs: 90_000
    })
    expect(info.timestamp.getTime()).toBe(now)
    // 11 task hashes of a few hundred bytes each, plus the structures.
    expect(info.memoryUsage).toBeGreaterThan(11 * 50)
  })

  it("reports paused and zero latency for a queue with nothing pending", async () => {
    await c.sadd("asynq:queues", "idle")
    await c.set("asynq:{idle}:paused", String(nowSec))
    const info = await h.run(getQueueInfo("idle"), now)
    expect(info).toMatchObject({ paused: true, size: 0, latencyMs: 0, pending: 0, processed: 0, processedTotal: 0 })
  })

  it("shows a hold (RateLimited with holdQueue) until it ends, beside the limit with its per-key parts", async () => {
    await c.sadd("asynq:queues", "crm")
    expect((await h.run(getQueueInfo("crm"), now)).heldUntil).toBeUndefined()
    // A hold on a queue without a limit: held, no limit.
    await h.run(runScript(holdQueueScript, { queue: "crm", untilMs: now + 30_000 }))
    const held = await h.run(getQueueInfo("crm"), now)
    expect(held.heldUntil).toEqual(new Date(now + 30_000))
    expect(held.limit).toBeUndefined()
    expect(queueSnapshot(held)).toMatchObject({ held_until: new Date(now + 30_000).toISOString() })
    // Beside a limit: both.
    await h.run(setQueueLimit("crm", { concurrency: 4, perKey: { rate: { limit: 2, per: "1s" } } }))
    await h.run(runScript(holdQueueScript, { queue: "crm", untilMs: now + 60_000 }))
    const both = await h.run(getQueueInfo("crm"), now)
    expect(both.heldUntil).toEqual(new Date(now + 60_000))
    expect(both.limit).toEqual({
      concurrency: 4,
      perKey: { rate: { limit: 2, perMs: 1000, intervalMs: 500, burst: 1 } }
    })
    expect(queueSnapshot(both)).toMatchObject({
      held_until: new Date(now + 60_000).toISOString(),
      limit: limitJson(both.limit!)
    })
    // Once the hold has ended it is not shown.
    const later = await h.run(getQueueInfo("crm"), now + 60_000)
    expect(later.heldUntil).toBeUndefined()
    expect(queueSnapshot(later)).not.toHaveProperty("held_until")
  })

  it("fails with QueueNotFound for a queue that is not in asynq:queues", async () => {
    const e = await h.fail(getQueueInfo("nope"))
    expect(e).toMatchObject({ _tag: "QueueNotFound", queue: "nope" })
    expect(e.message).toBe('queue "nope" does not exist')
  })

  it("reads Go asynq's captures: e-retry (counters) and a-enqueue (latency from pending_since)", async () => {
    const snap = await restoreSnapshot(c, "e-retry")
    const info = await h.run(getQueueInfo("default"), snap.now_unix * 1000)
    expect(info).toMatchObject({
      retry: 1,
      size: 1,
      processed: 1,
      failed: 1,
      processedTotal: 1,
      failedTotal: 1,
      pending: 0
    })

    const a = await restoreSnapshot(c, "a-enqueue")
    const at = a.now_unix * 1000 + 5000
    const d = await h.run(getQueueInfo("default"), at)
    const oldest = (a.keys["asynq:{default}:pending"]!.value as Array<string>).at(-1)!
    const since = Number(
      BigInt((a.keys[`asynq:{default}:t:${oldest}`]!.value as Record<string, string>).pending_since!) / 1_000_000n
    )
    expect(d.pending).toBe(2)
    expect(d.latencyMs).toBe(at - since)
    expect((await h.run(getQueueInfo("critical"), at)).pending).toBe(1)
  })

  it("reads j-paused and d-group captures", async () => {
    await restoreSnapshot(c, "j-paused")
    expect((await h.run(getQueueInfo("default"))).paused).toBe(true)
    await flushTestDb()
    await restoreSnapshot(c, "d-group")
    const info = await h.run(getQueueInfo("default"))
    expect(info).toMatchObject({ groups: 2, aggregating: 4, size: 4 })
  })
})

describe("history", () => {
  it("returns the last n days, today first, with zeros for days without keys", async () => {
    await c.sadd("asynq:queues", "default")
    await c.set("asynq:{default}:processed:2026-11-22", "7")
    await c.set("asynq:{default}:failed:2026-11-22", "2")
    await c.set("asynq:{default}:processed:2026-11-20", "30")
    const days = await h.run(history("default", 3), now)
    expect(days.map((d) => [d.date.toISOString().slice(0, 10), d.processed, d.failed])).toEqual([
      ["2026-11-22", 7, 2],
      ["2026-11-21", 0, 0],
      ["2026-11-20", 30, 0]
    ])
  })
  it("rejects a day count outside 1..90 and unknown queues", async () => {
    await c.sadd("asynq:queues", "default")
    expect(await h.fail(history("default", 0))).toMatchObject({ _tag: "InvalidArgument", field: "days" })
    expect(await h.fail(history("default", 91))).toMatchObject({ _tag: "InvalidArgument" })
    expect(await h.fail(history("nope", 2))).toMatchObject({ _tag: "QueueNotFound" })
  })
})

describe("groups", () => {
  it("lists groups with sizes, from Go asynq's d-group capture", async () => {
    await restoreSnapshot(c, "d-group")
    expect(await h.run(groups("default"))).toEqual([
      { group: "g1", size: 3 },
      { group: "g2", size: 1 }
    ])
  })
})
