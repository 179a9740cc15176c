/**
 * A running Server whose write of an attempt's outcome loses its reply (the proxy in front of real
 * Redis runs the script and drops the reply with the connection; ioredis reconnects and sends it
 * again): the outcome reported is what happened (completed / retried), not lease-lost, and Redis
 * counts the attempt once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { luaScript } from "../../src/redis/scripts.js"
import { queueKeys } from "../../src/wire/keys.js"
import { scriptCallOf, type ReplyDropProxy, startReplyDropProxy } from "../support/replyDropProxy.js"
import { baseRedisUrl, flushTestDb, rawClient, testDb } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "./support.js"

const c = rawClient()
let proxy: ReplyDropProxy

beforeAll(async () => {
  await flushTestDb()
  for (const s of ["complete", "completeAndLease", "retry", "dequeueLease"] as const)
    await c.script("LOAD", luaScript(s).source)
  const u = new URL(baseRedisUrl())
  proxy = await startReplyDropProxy({ host: u.hostname, port: Number(u.port || 6379) })
})
afterAll(async () => {
  await proxy.close()
  c.disconnect()
})

/**
 * Runs one warm-up task, then one whose outcome write (one of `scripts`: a completion goes as
 * `complete`, or as `completeAndLease` when the next fetch rides along) loses its reply; returns the
 * second outcome.
 */
const outcomeLosingReply = async (
  queue: string,
  scripts: ReadonlyArray<"complete" | "completeAndLease" | "retry">,
  fail: boolean
) => {
  const outcomes: Array<string> = []
  const srv = await startServer(
    async (task) => {
      if (fail && task.type === "t") throw new Error("boom")
    },
    {
      queues: { [queue]: 1 },
      concurrency: 1,
      retryDelay: () => 3_600_000,
      onSettled: (_, outcome) => void outcomes.push(outcome)
    },
    { url: `redis://127.0.0.1:${proxy.port}/${testDb()}` }
  )
  try {
    await srv.enqueue("warm", null, { queue })
    await waitFor(
      "the warm-up task",
      () => outcomes.length,
      (n) => n === 1
    )
    const before = proxy.dropped()
    const dropped = proxy.dropReplyOf((argv) => scripts.some((script) => scriptCallOf(script)(argv)))
    await srv.enqueue("t", null, { queue })
    await dropped
    await waitFor(
      "the second outcome",
      () => outcomes.length,
      (n) => n === 2
    )
    expect(proxy.dropped()).toBe(before + 1)
    return outcomes[1]
  } finally {
    await srv.shutdown()
  }
}

describe("a Server whose outcome write loses its reply", () => {
  it("completion: reported completed, counted once", async () => {
    expect(await outcomeLosingReply("plr-done", ["complete", "completeAndLease"], false)).toBe("completed")
    expect(await c.get(queueKeys("plr-done").processedTotal)).toBe("2")
  })

  it("retry: reported retried, in the retry set once, counted once", async () => {
    expect(await outcomeLosingReply("plr-retry", ["retry"], true)).toBe("retried")
    const k = queueKeys("plr-retry")
    expect(await c.zcard(k.retry)).toBe(1)
    expect(await c.get(k.failedTotal)).toBe("1")
    expect(await c.get(k.processedTotal)).toBe("2")
  })
})
