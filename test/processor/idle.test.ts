/**
 * An idle server on a private redis-server (so its command counts are its own): it does not
 * busy-poll, it still picks up a task pushed the way Go asynq's client pushes one (no wake-up
 * message), and its health check reports a Redis outage and the recovery. The poll interval is
 * kept on the Effect Clock, so the first two run on TestClock: the test decides when it passes.
 */
import { TestClock } from "effect/testing"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { leaseScoreExpirySec } from "../../src/broker/releaseLeases.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { asynqMsg, putPending } from "../support/asynqLayout.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "./support.js"

let redis: RedisServerHandle
let admin: IORedis
beforeAll(async () => {
  redis = await startRedisServer()
  admin = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
  admin.on("error", () => {}) // the health-check test stops the server under it
})
afterAll(async () => {
  admin.disconnect()
  await redis.stop()
})

/** A server on the private redis-server; with `testClock`, on a TestClock starting at the real time. */
const start = (handlers: HandlerInput, options: ServerOptions, testClock = false) =>
  startServer(handlers, options, { url: redis.url, connectTimeoutMs: 2000 }, testClock ? Date.now() : undefined)

/**
 * A short real pause with the server's TestClock standing still. TestClock does not show which
 * fibers sleep on it, so "the fetcher is waiting on its poll interval" has no condition to wait on;
 * the pause is far longer than the few Redis round trips that lead there.
 */
const letFibersSettle = () => new Promise((r) => setTimeout(r, 100))

/** Calls of a command since the last CONFIG RESETSTAT, from INFO commandstats. */
const calls = async (command: string) => {
  const info = (await admin.info("commandstats")) as string
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(info)?.[1] ?? 0)
}
/** Script runs: a script's first call on a connection is an EVAL (with its source), the later ones EVALSHA. */
const scriptCalls = async () => (await calls("evalsha")) + (await calls("eval"))

describe("idle server (private redis-server)", () => {
  it("sleeps between empty fetches: about one dequeue per poll interval, however many workers are idle", async () => {
    const s = await start(async () => {}, { queues: { idle: 1 }, concurrency: 20, pollIntervalMs: 200 }, true)
    try {
      // let it find the queue empty and settle into waiting (its clock stands still: no second fetch)
      await waitFor(
        "the first fetch",
        () => scriptCalls(),
        (n) => n >= 1
      )
      await letFibersSettle()
      await admin.config("RESETSTAT")
      // A busy poll does not wait on the clock: it would make hundreds of calls in this pause alone.
      await letFibersSettle()
      // One second of the server's clock, one poll interval at a time, each followed by its fetch.
      for (let interval = 1; interval <= 5; interval++) {
        await s.run(TestClock.adjust(200))
        await waitFor(
          `the fetch after poll interval ${interval}`,
          () => scriptCalls(),
          (n) => n >= interval
        )
        await letFibersSettle()
      }
      const dequeues = await scriptCalls()
      if (process.env.DEBUG_TESTS) console.log(await admin.info("commandstats"))
      // ~5 fetches in a second (plus at most a forward and a state write); a busy poll would make thousands.
      expect(dequeues).toBeGreaterThan(0)
      expect(dequeues).toBeLessThan(15)
    } finally {
      await s.shutdown()
    }
  })

  it("looks again at least every half lease when the poll interval is longer, so a parked worker's token stays valid", async () => {
    const s = await start(async () => {}, { queues: { longpoll: 1 }, pollIntervalMs: 60_000, leaseMs: 2000 }, true)
    /** The expiry second of the park token the worker left. */
    const token = async () => {
      const parked = await admin.hgetall("asynq:{longpoll}:parked")
      const values = Object.values(parked)
      expect(values).toHaveLength(1)
      return leaseScoreExpirySec(values[0]!)
    }
    try {
      await waitFor(
        "the first fetch's park token",
        () => admin.hlen("asynq:{longpoll}:parked"),
        (n) => n === 1
      )
      const first = await token()
      await s.run(TestClock.adjust(999))
      await letFibersSettle()
      expect(await token()).toBe(first)
      // Half a lease (1 s), far short of the 60 s poll interval: the loop fetches again and leaves a
      // fresh token, whose lease ends one second after the first one's.
      await s.run(TestClock.adjust(1))
      await waitFor(
        "a fresh token after half a lease",
        () => token(),
        (t) => t !== first
      )
      expect(await token()).toBe(first + 1)
    } finally {
      await s.shutdown()
    }
  })

  it("picks up a task pushed without a wake-up message (Go asynq's client) by the poll fallback, and one from our client at once", async () => {
    const done: Array<string> = []
    const s = await start(async (task) => void done.push(task.id), { queues: { mixed: 1 }, pollIntervalMs: 100 }, true)
    try {
      await admin.config("RESETSTAT")
      await waitFor(
        "the first (empty) fetch",
        () => scriptCalls(),
        (n) => n >= 1
      )
      await letFibersSettle()
      await putPending(admin, asynqMsg("mixed", "from-go"), Date.now()) // HSET + LPUSH, no PUBLISH
      // Only the poll fallback can find it: move the server's clock on one poll interval per look.
      await waitFor(
        "the Go-pushed task",
        async () => (await s.run(TestClock.adjust(100)), done),
        (ids) => ids.includes("from-go")
      )
      // Ours publishes a wake-up: picked up at once, with the server's clock standing still.
      const ours = await s.run(enqueue("ours", {}, { queue: "mixed" }))
      await waitFor(
        "our task",
        () => done,
        (ids) => ids.includes(ours.id)
      )
      expect(await admin.llen("asynq:{mixed}:pending")).toBe(0)
    } finally {
      await s.shutdown()
    }
  })

  it("the health check reports a Redis outage to the callback, and the recovery", async () => {
    const seen: Array<unknown> = []
    const s = await start(async () => {}, {
      queues: { hc: 1 },
      healthCheck: (e) => void seen.push(e),
      healthCheckIntervalMs: 50
    })
    try {
      await waitFor(
        "a healthy check",
        () => seen.length,
        (n) => n > 0
      )
      expect(seen.every((e) => e === undefined)).toBe(true)
      const port = redis.port
      await redis.stop()
      await waitFor(
        "a failed check",
        () => seen,
        (checks) => checks.some((e) => e !== undefined),
        { timeoutMs: 20_000 }
      )
      const failure = seen.find((e) => e !== undefined) as { _tag?: string; message?: string }
      expect(failure._tag).toBe("RedisError")
      redis = await startRedisServer([], port)
      const at = seen.length
      await waitFor(
        "a healthy check after the restart",
        () => seen.slice(at),
        (checks) => checks.some((e) => e === undefined),
        { timeoutMs: 20_000 }
      )
    } finally {
      await s.shutdown()
    }
  }, 60_000)
})
