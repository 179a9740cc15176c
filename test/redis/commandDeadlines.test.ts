/**
 * The command timeout of a single node's ioredis connection (src/redis/commandDeadlines.ts), with a
 * real redis-server: one timer per connection however many commands wait (ioredis's own option
 * armed one per command), every waiting command failed with a CommandTimeout once past its
 * deadline, late replies dropped in order (the next command reads its own reply), and commands
 * queued while the connection is down bounded too.
 */
import { Effect } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { isCommandTimeout } from "../../src/redis/errors.js"
import { openBroker } from "../support/redis.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

const timeoutMs = 1500

/** Node timers alive in this process. */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length

const outcome = <A, E>(effect: Effect.Effect<A, E>): Promise<{ ok: true; value: A } | { ok: false; error: unknown }> =>
  Effect.runPromise(effect).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error })
  )

describe("command deadlines of a single node's ioredis connection", () => {
  let server: RedisServerHandle
  beforeAll(async () => {
    server = await startRedisServer()
  })
  afterEach(() => void server.process.kill("SIGCONT"))
  afterAll(() => server.stop())

  it("500 commands waiting on a frozen server hold one timer, not one each; each fails with a CommandTimeout; after the thaw the next command reads its own reply", async () => {
    const { broker, close } = await openBroker({ url: server.url, commandTimeoutMs: timeoutMs })
    try {
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      server.process.kill("SIGSTOP")
      const before = timers()
      const calls = Array.from({ length: 500 }, (_, i) => outcome(broker.redis.command("echo", ["ECHO", `late-${i}`])))
      // The calls are written by now (the commands are sent synchronously); their timers would be armed.
      await new Promise((r) => setImmediate(r))
      expect(timers() - before).toBeLessThanOrEqual(1)
      const results = await Promise.all(calls)
      for (const r of results) {
        expect(r.ok).toBe(false)
        if (!r.ok) expect(isCommandTimeout(r.error)).toBe(true)
      }
      server.process.kill("SIGCONT")
      // The 500 late replies come first and are dropped, in order: this reply is this command's.
      expect(await Effect.runPromise(broker.redis.command("echo", ["ECHO", "mine"]))).toBe("mine")
    } finally {
      server.process.kill("SIGCONT")
      await close()
    }
  }, 30_000)

  it("commands keep flowing past many deadlines: a long run of calls answered in time, none failed", async () => {
    const { broker, close } = await openBroker({ url: server.url, commandTimeoutMs: 200 })
    try {
      // Longer than several timeouts: the timer goes off while commands wait and is armed again.
      const started = await Effect.runPromise(broker.redis.command("time", ["TIME"]))
      const seconds = (v: unknown) => Number((v as Array<string>)[0]) + Number((v as Array<string>)[1]) / 1e6
      let n = 0
      for (;;) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, (_, i) => Effect.runPromise(broker.redis.command("echo", ["ECHO", `m${n + i}`])))
        )
        expect(batch).toEqual(Array.from({ length: 50 }, (_, i) => `m${n + i}`))
        n += 50
        const now = await Effect.runPromise(broker.redis.command("time", ["TIME"]))
        if (seconds(now) - seconds(started) > 1) break
      }
    } finally {
      await close()
    }
  }, 30_000)

  it("a command queued while the server is down (offline queue) fails with a CommandTimeout", async () => {
    // Reconnect attempts alone would not end it: ioredis's per-request retry limit is lifted.
    const { broker, close } = await openBroker({
      url: server.url,
      commandTimeoutMs: timeoutMs,
      maxRetriesPerRequest: 1_000_000
    })
    const port = server.port
    try {
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      await server.stop()
      const r = await outcome(broker.redis.command("echo", ["ECHO", "offline"]))
      expect(r.ok).toBe(false)
      if (!r.ok) expect(isCommandTimeout(r.error)).toBe(true)
    } finally {
      await close()
      server = await startRedisServer([], port)
    }
  }, 30_000)
})
