/**
 * The Server's recoverer follows the leases: after each pass it sleeps until the earliest lease
 * (+ the grace) of its queues runs out, never longer than `recovererIntervalMs` (asynq's 60 s) and
 * never less than a second. Each test runs a Server on a TestClock against real Redis, plants the
 * lease a dead worker left behind (written, never extended), and moves the clock: the task must
 * go back to retry right after lease + grace, not at the next fixed period.
 */
import { TestClock } from "effect/testing"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import type { ServerOptions } from "../../src/processor/options.js"
import { recovererFloorMs, recovererSleepMs } from "../../src/processor/recoverer.js"
import { queueKeys } from "../../src/wire/keys.js"
import { makeMsg, putActive, readTask } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer, type TestServer } from "./support.js"

const redis = rawClient()
const queue = "orphans"
const k = queueKeys(queue)
/** The servers' TestClock start, on a whole second (lease scores are unix seconds). */
const t0Ms = Math.floor(Date.now() / 1000) * 1000
const t0Sec = t0Ms / 1000
/** asynq's defaults: recoverer every 60 s at most, grace 30 s; a recovered task waits an hour in retry (the forwarder leaves it there). */
const options: ServerOptions = { queues: { [queue]: 1 }, retryDelay: () => 3_600_000 }

/**
 * A short real pause with the server's TestClock standing still, for the recoverer to finish the
 * read after its pass and go to sleep (TestClock does not show which fibers sleep on it, so there is
 * no condition to wait on); far longer than the few Redis round trips that lead there.
 */
const letFibersSettle = () => new Promise((r) => setTimeout(r, 150))

/** A task a dead worker leased: active, its lease running out at `leaseSec`, nobody extending it. */
const plantOrphan = (id: string, leaseSec: number) => putActive(redis, makeMsg(queue, id, { retry: 3 }), leaseSec)

const stateOf = async (id: string) => (await readTask(redis, queue, id)).fields.state

const recovered = (id: string, timeoutMs = 5000) =>
  waitFor(
    `task ${id} recovered to retry`,
    () => stateOf(id),
    (s) => s === "retry",
    { timeoutMs }
  )

let server: TestServer | undefined
const start = async () => (server = await startServer(async () => {}, options, undefined, t0Ms))
const advance = (ms: number) => server!.run(TestClock.adjust(ms))

beforeEach(flushTestDb)
afterEach(async () => {
  await server?.shutdown()
  server = undefined
})
afterAll(() => void redis.disconnect())

describe("the Server's recoverer wakes when the earliest lease (+ grace) runs out", () => {
  it("a lease known at start: the task is recovered right after lease + grace, not at the next 60 s period", async () => {
    await plantOrphan("expired", t0Sec - 40) // lease + grace over before the start: the start pass takes it
    await plantOrphan("dead", t0Sec + 5) // lease + grace over at t0 + 35 s
    await start()
    await recovered("expired")
    await letFibersSettle()
    await advance(34_000)
    await letFibersSettle()
    expect(await stateOf("dead")).toBe("active") // its grace is not over yet
    await advance(2000) // t0 + 36 s = lease + grace + 1 s
    await recovered("dead")
    expect(await redis.zcard(k.lease)).toBe(0)
  })

  it("a lease taken after a pass is seen at the next one (at most the interval later) and recovered right after its lease + grace", async () => {
    await plantOrphan("marker", t0Sec - 40)
    await start()
    await recovered("marker")
    await letFibersSettle() // the read after the start pass saw no lease: the recoverer sleeps the interval
    await plantOrphan("dead", t0Sec + 40) // lease + grace over at t0 + 70 s
    await advance(60_000) // the pass at t0 + 60 s: nothing due yet, but it sees the lease
    await letFibersSettle()
    expect(await stateOf("dead")).toBe("active")
    await advance(9000)
    await letFibersSettle()
    expect(await stateOf("dead")).toBe("active")
    await advance(2000) // t0 + 71 s = lease + grace + 1 s (the fixed period's next pass would be at t0 + 120 s)
    await recovered("dead")
  })

  it("with no lease the loop still runs at the interval (60 s), and not sooner", async () => {
    await plantOrphan("marker", t0Sec - 40)
    await start()
    await recovered("marker")
    await letFibersSettle() // the recoverer read no lease: it sleeps the 60 s interval
    await plantOrphan("unseen", t0Sec - 100) // due already, but written after the read
    await advance(59_000)
    await letFibersSettle()
    expect(await stateOf("unseen")).toBe("active") // no pass in between: the loop does not spin
    await advance(1000)
    await recovered("unseen")
  })

  it("with the earliest lease beyond the interval the loop still wakes at the interval", async () => {
    await plantOrphan("marker", t0Sec - 40)
    await plantOrphan("far", t0Sec + 1000) // a long lease: due at t0 + 1030 s
    await start()
    await recovered("marker")
    await letFibersSettle()
    await plantOrphan("unseen", t0Sec - 100)
    await advance(59_000)
    await letFibersSettle()
    expect(await stateOf("unseen")).toBe("active")
    await advance(1000)
    await recovered("unseen")
    expect(await stateOf("far")).toBe("active")
  })

  it("more expired leases than one pass takes (100): the rest go a second later (the floor), not a period later", async () => {
    for (let i = 0; i < 150; i++) await plantOrphan(`backlog-${i}`, t0Sec - 40)
    await start()
    await waitFor(
      "the start pass's batch of 100",
      () => redis.zcard(k.lease),
      (n) => n === 50
    )
    await letFibersSettle()
    expect(await redis.zcard(k.lease)).toBe(50) // no second pass while the clock stands still
    await advance(1000)
    await waitFor(
      "the rest recovered",
      () => redis.zcard(k.lease),
      (n) => n === 0
    )
    expect(await redis.zcard(k.retry)).toBe(150)
  })
})

describe("recovererSleepMs", () => {
  const base = { graceMs: 30_000, nowMs: t0Ms, intervalMs: 60_000 }
  it("sleeps until the earliest lease + grace runs out, within [1 s, the interval]", () => {
    expect(recovererSleepMs({ ...base, earliestLeaseSec: undefined })).toBe(60_000)
    expect(recovererSleepMs({ ...base, earliestLeaseSec: t0Sec + 5 })).toBe(35_000)
    expect(recovererSleepMs({ ...base, earliestLeaseSec: t0Sec + 1000 })).toBe(60_000)
    expect(recovererSleepMs({ ...base, earliestLeaseSec: t0Sec - 30 })).toBe(recovererFloorMs)
    expect(recovererSleepMs({ ...base, earliestLeaseSec: t0Sec - 3600 })).toBe(recovererFloorMs)
    // an interval shorter than the floor wins
    expect(recovererSleepMs({ ...base, intervalMs: 200, earliestLeaseSec: t0Sec - 3600 })).toBe(200)
  })
})
