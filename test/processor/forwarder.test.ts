/**
 * The Server's forwarder follows the due times (issue 35): after each pass it sleeps until the
 * earliest due time of its queues, to the millisecond for tasks effect-asynq wrote, never longer
 * than `delayedTaskCheckIntervalMs` (asynq's 5 s); a task written meanwhile that is due earlier
 * wakes it (its write publishes on the forward channel). Each test runs a Server on a TestClock
 * against real Redis and moves the clock: a task must start on its due millisecond, not a
 * millisecond before, and not at the next fixed period. (How late in real time is measured in
 * bench/, scenario "scheduled lateness".)
 */
import { TestClock } from "effect/testing"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import type { ServerOptions } from "../../src/processor/options.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer, type TestServer } from "./support.js"

const redis = rawClient()
const queues = ["sched-a", "sched-b"]
/** The servers' TestClock start, on a whole second plus 250 ms (so due times have a sub-second part). */
const t0Ms = Math.floor(Date.now() / 1000) * 1000 + 250

/**
 * A short real pause with the server's TestClock standing still, for the forwarder to finish its
 * pass and go to sleep (TestClock does not show which fibers sleep on it, so there is no condition
 * to wait on); far longer than the few Redis round trips that lead there.
 */
const letFibersSettle = () => new Promise((r) => setTimeout(r, 150))

let server: TestServer | undefined
/** Handler calls, in order: `<id>#<attempt>`. */
let calls: Array<string> = []
const options = (over: Partial<ServerOptions> = {}): ServerOptions => ({
  queues: { "sched-a": 2, "sched-b": 1 },
  concurrency: 4,
  ...over
})
const start = async (over: Partial<ServerOptions> = {}, handler: (id: string, retried: number) => void = () => {}) =>
  (server = await startServer(
    async (task) => {
      calls.push(`${task.id}#${task.retryCount}`)
      handler(task.id, task.retryCount)
    },
    options(over),
    undefined,
    t0Ms
  ))
const advance = (ms: number) => server!.run(TestClock.adjust(ms))
const ran = (entry: string) =>
  waitFor(
    `handler call ${entry}`,
    () => calls,
    (c) => c.includes(entry),
    { timeoutMs: 5000 }
  )

beforeEach(async () => {
  calls = []
  await flushTestDb()
})
afterEach(async () => {
  await server?.shutdown()
  server = undefined
})
afterAll(() => void redis.disconnect())

describe("the Server's forwarder sleeps until the earliest due time", () => {
  it("tasks due 1.5 s and 4.2 s after start run on their millisecond, not one before, and not at the 5 s period", async () => {
    await start()
    await server!.enqueue("t", {}, { queue: "sched-a", processIn: 1500, taskId: "in-1500" })
    await server!.enqueue("t", {}, { queue: "sched-b", processIn: 4200, taskId: "in-4200" })
    await letFibersSettle()
    await advance(1499)
    await letFibersSettle()
    expect(calls).toEqual([])
    await advance(1)
    await ran("in-1500#0")
    await letFibersSettle()
    await advance(4200 - 1500 - 1)
    await letFibersSettle()
    expect(calls).toEqual(["in-1500#0"])
    await advance(1)
    await ran("in-4200#0")
  })

  it("a task written while the forwarder sleeps the interval, due before it, wakes it (the write's announcement)", async () => {
    await start()
    await letFibersSettle() // the start pass saw nothing: the forwarder plans to look at t0 + 5 s
    await server!.enqueue("t", {}, { queue: "sched-b", processIn: 300, taskId: "in-300" })
    await letFibersSettle() // the announcement reaches the forwarder, which plans t0 + 300 ms
    await advance(299)
    await letFibersSettle()
    expect(calls).toEqual([])
    await advance(1)
    await ran("in-300#0")
  })

  it("a failed attempt with a 200 ms retry delay runs again 200 ms later", async () => {
    await start({ retryDelay: () => 200 }, (_id, retried) => {
      if (retried === 0) throw new Error("first attempt fails")
    })
    await server!.enqueue("t", {}, { queue: "sched-a", taskId: "flaky" })
    await ran("flaky#0")
    await waitFor(
      "the task in retry",
      () => redis.zcard(queueKeys("sched-a").retry),
      (n) => n === 1
    )
    await letFibersSettle()
    await advance(199)
    await letFibersSettle()
    expect(calls).toEqual(["flaky#0"])
    await advance(1)
    await ran("flaky#1")
  })

  it("a burst due at the same millisecond in two queues is moved by the pass at that moment, every task (more than a script call takes)", async () => {
    await start({ concurrency: 1 }, () => {})
    // Written straight, without running: the handler is slow to reach them all, the zsets are what counts.
    for (const queue of queues) {
      for (let from = 0; from < 1500; from += 500) {
        await Promise.all(
          Array.from({ length: 500 }, (_, i) =>
            server!.enqueue("t", {}, { queue, processIn: 700, taskId: `${queue}-${from + i}` })
          )
        )
      }
    }
    await letFibersSettle()
    await advance(699)
    await letFibersSettle()
    for (const q of queues) expect(await redis.zcard(queueKeys(q).scheduled)).toBe(1500)
    await advance(1)
    // No further clock movement: the pass at t0 + 700 ms moves them all (1500 per queue, over 1000 a call).
    for (const q of queues) {
      const k = queueKeys(q)
      await waitFor(
        `queue ${q}'s scheduled and due_ms empty`,
        async () => (await redis.zcard(k.scheduled)) + (await redis.zcard(k.dueMs)),
        (n) => n === 0
      )
    }
    // And the worker runs them from pending (its first one may start after the zsets emptied).
    await waitFor(
      "the handler's first call",
      async () => calls.length,
      (n) => n > 0
    )
  })

  it("with nothing scheduled the forwarder still looks at the interval, so a task that announces nothing (Go asynq's) is seen within it", async () => {
    await start()
    await letFibersSettle()
    // As a Go client writes it: whole seconds, no exact entry, no announcement.
    const goTaskSec = Math.ceil(t0Ms / 1000) + 1
    await redis.hset(queueKeys("sched-a").task("from-go"), "msg", Buffer.from([]), "state", "scheduled")
    await redis.zadd(queueKeys("sched-a").scheduled, goTaskSec, "from-go")
    await advance(goTaskSec * 1000 - t0Ms)
    await letFibersSettle()
    expect(await redis.zscore(queueKeys("sched-a").scheduled, "from-go")).not.toBeNull()
    await advance(5000 - (goTaskSec * 1000 - t0Ms)) // t0 + 5 s: the interval's look
    await waitFor(
      "the Go task forwarded",
      () => redis.zscore(queueKeys("sched-a").scheduled, "from-go"),
      (s) => s === null
    )
  })
})
