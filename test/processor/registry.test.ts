/**
 * The registry of running attempts (src/processor/registry.ts). asynq's task ids are unique per
 * queue only, and a task whose lease ran out can be leased again while its stale attempt is still
 * finishing: each attempt counts for its own slot, the heartbeat extends each queue's own task, and
 * one attempt ending never takes another one's place out of the registry.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { extendLeasesOnce } from "../../src/processor/heartbeat.js"
import { makeRegistry, type StopReason } from "../../src/processor/registry.js"
import { makeActiveTask } from "../../src/processor/runAttempt.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, makeMsg, putActive } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { runBroker } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

/** An attempt whose stops are recorded in `stops`. */
const attempt = (queue: string, id: string, stops: Array<string>, leaseExpiresAtMs = baseNowMs + 30_000) => {
  const t = makeActiveTask(makeMsg(queue, id), baseNowMs, leaseExpiresAtMs)
  t.onStop = (reason: StopReason) => void stops.push(`${queue}/${id}:${reason}`)
  return t
}

describe("registry", () => {
  it("holds tasks of two queues with the same id apart: each counts, each is removed on its own, a queue-scoped stop stops one, asynq's cancel (by id) both", () => {
    const registry = makeRegistry()
    const stops: Array<string> = []
    const a = attempt("qa", "same", stops)
    const b = attempt("qb", "same", stops)
    registry.add(a)
    registry.add(b)
    expect(registry.tasks.size).toBe(2)
    expect(stops).toEqual([])
    expect([...registry.byQueue().entries()].map(([q, ts]) => [q, ts.length])).toEqual([
      ["qa", 1],
      ["qb", 1]
    ])
    expect(registry.stop("same", "lease-lost", "qb")).toBe(true)
    expect(stops).toEqual(["qb/same:lease-lost"])
    registry.remove(b)
    expect(registry.tasks.size).toBe(1)
    expect(registry.byQueue().get("qa")).toEqual([a])
    const c2 = attempt("qb", "same", stops)
    registry.add(c2)
    expect(registry.stop("same", "canceled")).toBe(true)
    expect(stops).toEqual(["qb/same:lease-lost", "qa/same:canceled", "qb/same:canceled"])
  })

  it("a task leased again while its stale attempt still runs: the stale one is stopped (lease lost), both hold a slot until they end, and the stale one ending keeps the new one registered", () => {
    const registry = makeRegistry()
    const stops: Array<string> = []
    const stale = attempt("q", "x", stops)
    const fresh = attempt("q", "x", stops)
    registry.add(stale)
    registry.add(fresh)
    expect(stops).toEqual(["q/x:lease-lost"])
    expect(registry.tasks.size).toBe(2)
    expect(registry.byQueue().get("q")).toEqual([fresh])
    registry.remove(stale)
    expect(registry.tasks.size).toBe(1)
    expect(registry.byQueue().get("q")).toEqual([fresh])
    expect(registry.stop("x", "canceled", "q")).toBe(true)
    expect(stops).toEqual(["q/x:lease-lost", "q/x:canceled"])
  })

  it("the heartbeat extends the leases of same-id tasks in two queues, and stops only the one whose lease is gone", async () => {
    const registry = makeRegistry()
    const stops: Array<string> = []
    // Leases that end in a second: the beat extends them to 30 s from now.
    const a = attempt("hq1", "dup", stops, baseNowMs + 1000)
    const b = attempt("hq2", "dup", stops, baseNowMs + 1000)
    await putActive(c, a.msg, baseNowMs / 1000 + 1)
    await putActive(c, b.msg, baseNowMs / 1000 + 1)
    registry.add(a)
    registry.add(b)
    const first = await runBroker(extendLeasesOnce(registry, 30_000))
    expect(first).toEqual([])
    for (const q of ["hq1", "hq2"])
      expect(Number(await c.zscore(queueKeys(q).lease, "dup"))).toBeGreaterThanOrEqual(baseNowMs / 1000 + 30)
    expect(a.leaseExpiresAtMs).toBeGreaterThanOrEqual(baseNowMs + 30_000)
    expect(b.leaseExpiresAtMs).toBeGreaterThanOrEqual(baseNowMs + 30_000)
    await c.zrem(queueKeys("hq2").lease, "dup")
    const second = await runBroker(extendLeasesOnce(registry, 30_000))
    expect(second).toEqual(["dup"])
    expect(stops).toEqual(["hq2/dup:lease-lost"])
    expect(a.stopReason).toBeUndefined()
  })
})
