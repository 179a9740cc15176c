/**
 * A handler's RateLimited outcome (a remote 429): the task goes back to the retry set, due after its
 * retryAfter, without using up a retry: retried unchanged, no failure counted, no error handler,
 * never archived for it (a task with no retries left still comes back and runs).
 */
import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RateLimited } from "../../src/processor/errors.js"
import { queueKeys } from "../../src/wire/keys.js"
import { baseNowMs, readTask, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("RateLimited (real Redis, in process)", () => {
  it("puts the task back due after retryAfter (TestClock), not counted: retried, failed counters and the error handler untouched", async () => {
    const errorsHandled: Array<string> = []
    const nowMs = baseNowMs + 250
    const srv = await startServer(
      {
        "rl:async": async () => {
          throw new RateLimited({ retryAfter: "1 minute" })
        },
        "rl:wrapped": () =>
          Effect.fail(
            new Error("upstream said 429", { cause: new RateLimited({ retryAfter: 1500, message: "slow down" }) })
          )
      },
      {
        concurrency: 2,
        shutdownTimeoutMs: 1000,
        queues: { rl: 1 },
        errorHandler: (task) => void errorsHandled.push(task.id)
      },
      undefined,
      nowMs
    )
    try {
      const k = queueKeys("rl")
      // No retries left: a failure would archive them at once.
      const a = await srv.enqueue("rl:async", undefined, { queue: "rl", maxRetry: 0 })
      const b = await srv.enqueue("rl:wrapped", undefined, { queue: "rl", maxRetry: 0 })
      await waitFor(
        "both back in retry",
        () => c.zcard(k.retry),
        (n) => n === 2
      )
      expect(await c.zcard(k.archived)).toBe(0)
      const ta = await readTask(c, "rl", a)
      expect(ta.fields.state).toBe("retry")
      expect(ta.msg!.retried).toBe(0)
      expect(ta.msg!.errorMsg).toBe("rate limited: retry after 60000 ms")
      const tb = await readTask(c, "rl", b)
      expect(tb.msg!.retried).toBe(0)
      expect(tb.msg!.errorMsg).toBe("upstream said 429")
      // Due exactly retryAfter after the attempt ended (the exact ms is kept next to asynq's whole-second score).
      expect(Object.fromEntries(await zsetOf(c, k.dueMs))).toEqual({ [a]: nowMs + 60_000, [b]: nowMs + 1500 })
      expect(await c.get(k.failedTotal)).toBeNull()
      expect(await c.get(k.failed(nowMs))).toBeNull()
      expect(errorsHandled).toEqual([])
    } finally {
      await srv.shutdown()
    }
  })

  it("a task rate limited with no retries left comes back once due and completes", async () => {
    let calls = 0
    const srv = await startServer(
      {
        "rl:once": async () => {
          if (++calls === 1) throw new RateLimited({ retryAfter: 200 })
        }
      },
      { concurrency: 1, shutdownTimeoutMs: 1000, queues: { "rl-once": 1 }, delayedTaskCheckIntervalMs: 100 }
    )
    try {
      const k = queueKeys("rl-once")
      const id = await srv.enqueue("rl:once", undefined, { queue: "rl-once", maxRetry: 0, retention: 60_000 })
      await waitFor(
        "completed",
        () => c.zcard(k.completed),
        (n) => n === 1,
        { timeoutMs: 15_000 }
      )
      expect(calls).toBe(2)
      const t = await readTask(c, "rl-once", id)
      expect(t.fields.state).toBe("completed")
      expect(t.msg!.retried).toBe(0)
      expect(await c.get(k.failedTotal)).toBeNull()
      expect(await c.zcard(k.archived)).toBe(0)
    } finally {
      await srv.shutdown()
    }
  })
})
