/**
 * Keep-last-while-active with a real worker (in process, 4 slots): while a key's task runs, the
 * enqueues of that key leave one waiting task (the last payload), which the worker releases when
 * the running one finishes; the two never run at once, and the key is free afterwards. A task that
 * goes back for a retry keeps the key.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { enqueueKeepLast } from "../../src/steps/enqueueKeepLast.js"
import type { Task } from "../../src/processor/Task.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { startServer } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("keep-last-while-active with a worker (real Redis)", () => {
  it("one runs, the enqueues meanwhile collapse to the last, which runs after it; never two at once", async () => {
    const q = "kl-worker"
    const k = queueKeys(q)
    const ran: Array<number> = []
    let running = 0
    let most = 0
    let release: (() => void) | undefined
    const gate = new Promise<void>((r) => (release = r))
    const srv = await startServer(
      {
        "kl:sync": async (t: Task) => {
          running++
          most = Math.max(most, running)
          const { n } = t.json() as { n: number }
          ran.push(n)
          if (n === 0) await gate
          running--
        }
      },
      { concurrency: 4, shutdownTimeoutMs: 1000, queues: { [q]: 1 }, pollIntervalMs: 100 }
    )
    try {
      const enq = (n: number) => srv.run(enqueueKeepLast("kl:sync", { n }, { key: "doc:1" }, { queue: q }))
      expect((await enq(0)).waiting).toBe(false)
      await waitFor(
        "the first task running",
        () => Promise.resolve(ran.length),
        (x) => x === 1
      )
      const outcomes = []
      for (let n = 1; n <= 20; n++) outcomes.push(await enq(n))
      expect(outcomes.every((o) => o.waiting)).toBe(true)
      expect(outcomes.filter((o) => o.replaced)).toHaveLength(19)
      expect(await c.zcard(k.scheduled)).toBe(1)
      expect(ran).toEqual([0])
      release!()
      await waitFor(
        "the last one ran and the key is free",
        async () => ({ ran: ran.length, key: await c.exists(k.keepLast("doc:1")) }),
        (s) => s.ran === 2 && s.key === 0
      )
      expect(ran).toEqual([0, 20])
      expect(most).toBe(1)
      expect(await c.zcard(k.scheduled)).toBe(0)
      // Free again: the next enqueue runs at once.
      expect((await enq(21)).waiting).toBe(false)
      await waitFor(
        "it ran",
        () => Promise.resolve(ran.length),
        (x) => x === 3
      )
    } finally {
      await srv.shutdown()
    }
  })

  it("a task that goes back for a retry keeps the key: the waiting one runs only after the retry succeeds", async () => {
    const q = "kl-retry"
    const k = queueKeys(q)
    const ran: Array<string> = []
    let failOnce = true
    const srv = await startServer(
      {
        "kl:job": async (t: Task) => {
          const { n } = t.json() as { n: number }
          ran.push(`${n}`)
          if (n === 0 && failOnce) {
            failOnce = false
            throw new Error("first attempt fails")
          }
        }
      },
      {
        concurrency: 4,
        shutdownTimeoutMs: 1000,
        queues: { [q]: 1 },
        pollIntervalMs: 100,
        delayedTaskCheckIntervalMs: 100,
        retryDelay: () => 300
      }
    )
    try {
      const enq = (n: number) => srv.run(enqueueKeepLast("kl:job", { n }, { key: "k" }, { queue: q }))
      await enq(0)
      await waitFor(
        "the first attempt failed",
        () => c.zcard(k.retry),
        (n) => n === 1
      )
      const w = await enq(1)
      expect(w.waiting).toBe(true)
      await waitFor(
        "both done",
        async () => ({ ran: ran.length, key: await c.exists(k.keepLast("k")) }),
        (s) => s.ran === 3 && s.key === 0,
        { timeoutMs: 15_000 }
      )
      expect(ran).toEqual(["0", "0", "1"])
    } finally {
      await srv.shutdown()
    }
  })
})
