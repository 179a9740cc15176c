import { Effect } from "effect"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RevokeTask, SkipRetry } from "../../src/processor/errors.js"
import { TaskContext } from "../../src/processor/TaskContext.js"
import type { Task } from "../../src/processor/Task.js"
import { queueKeys } from "../../src/wire/keys.js"
import { readTask, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { waitFor } from "../support/waitFor.js"
import { runBroker, startServer } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

const base = { concurrency: 4, shutdownTimeoutMs: 1000 }

describe("Server (real Redis, in process)", () => {
  it("runs Effect and async handlers with the task's context, and stores results", async () => {
    const seen: Array<Record<string, unknown>> = []
    const srv = await startServer(
      {
        "fx:": (task) =>
          Effect.gen(function* () {
            const ctx = yield* TaskContext
            seen.push({
              kind: "effect",
              id: ctx.taskId,
              retry: ctx.retryCount,
              max: ctx.maxRetry,
              queue: ctx.queue,
              payload: task.json()
            })
            yield* ctx.writeResult({ ok: task.id })
          }),
        "async:": async (task, signal) => {
          seen.push({
            kind: "async",
            id: task.id,
            retry: task.retryCount,
            max: task.maxRetry,
            queue: task.queue,
            payload: task.json(),
            aborted: signal.aborted
          })
          await task.resultWriter.write("done")
        }
      },
      { ...base, queues: { ctx: 1 } }
    )
    try {
      const a = await srv.enqueue("fx:one", { n: 1 }, { queue: "ctx", maxRetry: 3, retention: 60_000 })
      const b = await srv.enqueue("async:two", { n: 2 }, { queue: "ctx", maxRetry: 7, retention: 60_000 })
      const k = queueKeys("ctx")
      await waitFor(
        "both completed",
        () => c.zcard(k.completed),
        (n) => n === 2
      )
      expect(seen).toEqual(
        expect.arrayContaining([
          { kind: "effect", id: a, retry: 0, max: 3, queue: "ctx", payload: { n: 1 } },
          { kind: "async", id: b, retry: 0, max: 7, queue: "ctx", payload: { n: 2 }, aborted: false }
        ])
      )
      expect((await readTask(c, "ctx", a)).fields.result).toBe(JSON.stringify({ ok: a }))
      expect((await readTask(c, "ctx", b)).fields.result).toBe("done")
      expect(await c.get(k.processedTotal)).toBe("2")
    } finally {
      await srv.shutdown()
    }
  })

  it("groupAggregator: a full group becomes one task in the group's queue, processed like any other", async () => {
    const digests: Array<unknown> = []
    const srv = await startServer(
      {
        "item:": async () => {
          throw new Error("grouped tasks are only processed through their aggregate")
        },
        digest: async (task) => void digests.push(task.json())
      },
      {
        ...base,
        queues: { agg: 1 },
        groupMaxSize: 3,
        groupCheckIntervalMs: 50,
        groupAggregator: (group, tasks) => ({ type: "digest", payload: { group, ids: tasks.map((t) => t.id).sort() } })
      }
    )
    try {
      const ids = [] as Array<string>
      for (const n of [1, 2, 3]) ids.push(await srv.enqueue(`item:${n}`, { n }, { queue: "agg", group: "daily" }))
      await waitFor(
        "the digest ran",
        () => digests.length,
        (v) => v === 1
      )
      expect(digests).toEqual([{ group: "daily", ids: ids.sort() }])
      const k = queueKeys("agg")
      expect(await c.exists(k.group("daily"), k.allAggregationSets, ...ids.map((id) => k.task(id)))).toBe(0)
    } finally {
      await srv.shutdown()
    }
  })

  it("retries a failure with the error message and the retry delay, keeps a defect's message, and calls the error handler", async () => {
    const errors: Array<[string, string]> = []
    const srv = await startServer(
      {
        "fail:throw": async () => {
          throw new Error("boom: upstream 503")
        },
        "fail:defect": () => Effect.die(new TypeError("cannot read x of undefined")),
        "fail:effect": () => Effect.fail({ _tag: "Declined", message: "card declined" })
      },
      {
        ...base,
        queues: { fails: 1 },
        retryDelay: (n) => (n + 1) * 3_600_000,
        errorHandler: (task, e) =>
          void errors.push([task.type, e instanceof Error ? e.message : String((e as { message: string }).message)])
      }
    )
    try {
      const k = queueKeys("fails")
      const before = Math.floor(Date.now() / 1000)
      const ids = [
        await srv.enqueue("fail:throw", undefined, { queue: "fails" }),
        await srv.enqueue("fail:defect", undefined, { queue: "fails" }),
        await srv.enqueue("fail:effect", undefined, { queue: "fails", maxRetry: 5 })
      ]
      await waitFor(
        "three retries",
        () => c.zcard(k.retry),
        (n) => n === 3
      )
      const after = Math.ceil(Date.now() / 1000)
      for (const [id, score] of await zsetOf(c, k.retry)) {
        expect(ids).toContain(id)
        expect(score).toBeGreaterThanOrEqual(before + 3600)
        expect(score).toBeLessThanOrEqual(after + 3600)
      }
      const msgs = await Promise.all(ids.map((id) => readTask(c, "fails", id)))
      expect(msgs.map((m) => m.msg!.errorMsg)).toEqual([
        "boom: upstream 503",
        "cannot read x of undefined",
        "card declined"
      ])
      expect(msgs.map((m) => m.msg!.retried)).toEqual([1, 1, 1])
      expect(msgs.map((m) => m.fields.state)).toEqual(["retry", "retry", "retry"])
      expect(await c.get(k.failedTotal)).toBe("3")
      expect(errors.sort()).toEqual([
        ["fail:defect", "cannot read x of undefined"],
        ["fail:effect", "card declined"],
        ["fail:throw", "boom: upstream 503"]
      ])
    } finally {
      await srv.shutdown()
    }
  })

  it("archives on SkipRetry (also wrapped) and when retries are used up; drops a RevokeTask; isFailure=false does not count", async () => {
    const srv = await startServer(
      {
        "skip:direct": async () => {
          throw new SkipRetry("bad payload")
        },
        "skip:wrapped": async () => {
          throw new Error("json.Unmarshal failed: skip retry", { cause: new SkipRetry() })
        },
        exhausted: async () => {
          throw new Error("still failing")
        },
        revoke: () => Effect.fail(new RevokeTask()),
        transient: async () => {
          throw new Error("rate limited")
        }
      },
      { ...base, queues: { outcomes: 1 }, isFailure: (e) => !(e instanceof Error && e.message === "rate limited") }
    )
    try {
      const k = queueKeys("outcomes")
      const skip = await srv.enqueue("skip:direct", undefined, { queue: "outcomes" })
      const wrapped = await srv.enqueue("skip:wrapped", undefined, { queue: "outcomes" })
      const exhausted = await srv.enqueue("exhausted", undefined, { queue: "outcomes", maxRetry: 0 })
      const revoked = await srv.enqueue("revoke", undefined, { queue: "outcomes", retention: 60_000 })
      const transient = await srv.enqueue("transient", undefined, { queue: "outcomes" })
      await waitFor(
        "all settled",
        async () => ({
          archived: await c.zcard(k.archived),
          retry: await c.zcard(k.retry),
          active: await c.llen(k.active)
        }),
        (s) => s.archived === 3 && s.retry === 1 && s.active === 0
      )
      expect((await zsetOf(c, k.archived)).map(([id]) => id).sort()).toEqual([skip, wrapped, exhausted].sort())
      expect((await readTask(c, "outcomes", skip)).msg!.errorMsg).toBe("bad payload")
      expect((await readTask(c, "outcomes", wrapped)).msg!.errorMsg).toBe("json.Unmarshal failed: skip retry")
      expect((await readTask(c, "outcomes", exhausted)).msg!.retried).toBe(0)
      expect(await c.exists(k.task(revoked))).toBe(0)
      expect(await c.zcard(k.completed)).toBe(0)
      const t = await readTask(c, "outcomes", transient)
      expect(t.fields.state).toBe("retry")
      expect(t.msg!.retried).toBe(0)
      expect(t.msg!.errorMsg).toBe("rate limited")
      // 3 archived failures count; the transient one does not; the revoked one is processed, not failed
      expect(await c.get(k.failedTotal)).toBe("3")
    } finally {
      await srv.shutdown()
    }
  })

  it("interrupts a handler that never returns at its timeout (fiber and AbortSignal) and retries it", async () => {
    let aborted: unknown
    let interrupted = 0
    const srv = await startServer(
      {
        "hang:async": (_task, signal) =>
          new Promise<void>(() => {
            signal.addEventListener("abort", () => (aborted = signal.reason))
          }),
        "hang:effect": () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void interrupted++)))
      },
      { ...base, queues: { hang: 1 }, retryDelay: () => 3_600_000 }
    )
    try {
      const k = queueKeys("hang")
      const a = await srv.enqueue("hang:async", undefined, { queue: "hang", timeout: 1000 })
      const b = await srv.enqueue("hang:effect", undefined, { queue: "hang", deadline: new Date(Date.now() + 1500) })
      await waitFor(
        "both retried",
        () => c.zcard(k.retry),
        (n) => n === 2
      )
      for (const id of [a, b]) {
        const t = await readTask(c, "hang", id)
        expect(t.msg!.errorMsg).toBe("context deadline exceeded")
        expect(t.msg!.retried).toBe(1)
      }
      expect(aborted).toMatchObject({ _tag: "TaskDeadlineExceeded" })
      expect(interrupted).toBe(1)
      expect(await c.llen(k.active)).toBe(0)
    } finally {
      await srv.shutdown()
    }
  })

  it("cancels a running task through asynq:cancel (context canceled, retried)", async () => {
    let started: Task | undefined
    const srv = await startServer(
      {
        slow: (task, signal) =>
          new Promise<void>((_, reject) => {
            started = task
            signal.addEventListener("abort", () => reject(signal.reason))
          })
      },
      { ...base, queues: { cancel: 1 }, retryDelay: () => 3_600_000 }
    )
    try {
      const id = await srv.enqueue("slow", undefined, { queue: "cancel" })
      await waitFor("task started", () => started)
      expect(await c.publish("asynq:cancel", id)).toBeGreaterThanOrEqual(1)
      await waitFor(
        "task retried",
        () => c.zcard(queueKeys("cancel").retry),
        (n) => n === 1
      )
      expect((await readTask(c, "cancel", id)).msg!.errorMsg).toBe("context canceled")
    } finally {
      await srv.shutdown()
    }
  })

  it("processes queues in strict priority order", async () => {
    const order: Array<string> = []
    // Fill three queues before the server starts, then run one task at a time.
    for (const q of ["low", "high", "mid"])
      for (let i = 0; i < 3; i++) await runBroker(enqueue("prio", q, { queue: q }))
    const srv = await startServer(
      { prio: async (task) => void order.push(task.text()) },
      { concurrency: 1, queues: { high: 3, mid: 2, low: 1 }, strictPriority: true }
    )
    try {
      await waitFor(
        "all nine",
        () => order.length,
        (v) => v === 9
      )
      expect(order).toEqual(["high", "high", "high", "mid", "mid", "mid", "low", "low", "low"])
    } finally {
      await srv.shutdown()
    }
  })
})
