import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { extendLeasesOnce, heartbeatLoop } from "../../src/processor/heartbeat.js"
import { makeRegistry } from "../../src/processor/registry.js"
import { makeActiveTask } from "../../src/processor/runAttempt.js"
import type { Task } from "../../src/processor/Task.js"
import { queueKeys } from "../../src/wire/keys.js"
import { decodeServerInfo } from "../../src/wire/ServerInfo.js"
import { decodeWorkerInfo } from "../../src/wire/WorkerInfo.js"
import { baseNowMs, makeMsg, putActive, putPendingBytes, readTask, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { runBroker, startServer } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("server state, leases, corrupt messages, shutdown (real Redis)", () => {
  it("lists the server in asynq:servers / asynq:workers in asynq's layout, and removes it at shutdown", async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const srv = await startServer(
      { "slow:job": () => gate },
      { concurrency: 4, queues: { critical: 6, default: 3, low: 1 }, heartbeatIntervalMs: 200, host: "vm", pid: 25483 }
    )
    try {
      const id = await srv.enqueue("slow:job", { n: 1 }, { timeout: 600_000 })
      const sid = srv.handle.identity.serverId
      const skey = `asynq:servers:{vm:25483:${sid}}`
      const wkey = `asynq:workers:{vm:25483:${sid}}`
      await waitFor(
        "a worker entry",
        () => c.hlen(wkey),
        (n) => n === 1
      )
      const now = Math.floor(Date.now() / 1000)
      const [[member, score]] = await zsetOf(c, "asynq:servers")
      expect(member).toBe(skey)
      expect(score).toBeGreaterThanOrEqual(now)
      expect(score).toBeLessThanOrEqual(now + 2)
      expect((await zsetOf(c, "asynq:workers")).map(([m]) => m)).toEqual([wkey])
      expect(await c.ttl(skey)).toBeGreaterThan(0)
      expect(await c.ttl(wkey)).toBeGreaterThan(0)
      const info = decodeServerInfo(new Uint8Array((await c.getBuffer(skey))!))
      expect(info).toMatchObject({
        host: "vm",
        pid: 25483,
        serverId: sid,
        concurrency: 4,
        queues: { critical: 6, default: 3, low: 1 },
        strictPriority: false,
        status: "active",
        activeWorkerCount: 1
      })
      const w = decodeWorkerInfo(new Uint8Array((await c.hgetBuffer(wkey, id))!))
      expect(w).toMatchObject({
        host: "vm",
        pid: 25483,
        serverId: sid,
        taskId: id,
        taskType: "slow:job",
        queue: "default"
      })
      expect(new TextDecoder().decode(w.taskPayload)).toBe('{"n":1}')
      expect(w.deadline.seconds - w.startTime.seconds).toBe(600)
      release()
      await waitFor(
        "task done",
        () => c.llen(queueKeys("default").active),
        (n) => n === 0
      )
    } finally {
      release()
      await srv.shutdown()
    }
    expect(await c.zcard("asynq:servers")).toBe(0)
    expect(await c.zcard("asynq:workers")).toBe(0)
    expect(await c.keys("asynq:servers:*")).toEqual([])
    expect(await c.keys("asynq:workers:*")).toEqual([])
  })

  it("shutdown with tasks in flight: finished ones complete, unfinished ones go back to the head of pending", async () => {
    const started: Array<string> = []
    const srv = await startServer(
      {
        quick: async () => {},
        stuck: (task: Task, signal: AbortSignal) =>
          new Promise<void>((_, reject) => {
            started.push(task.id)
            signal.addEventListener("abort", () => reject(signal.reason))
          })
      },
      { concurrency: 3, queues: { inflight: 1 }, shutdownTimeoutMs: 300 }
    )
    const k = queueKeys("inflight")
    const stuck = [
      await srv.enqueue("stuck", 1, { queue: "inflight" }),
      await srv.enqueue("stuck", 2, { queue: "inflight" })
    ]
    await srv.enqueue("quick", 3, { queue: "inflight" })
    await waitFor(
      "both stuck tasks running",
      () => started.length,
      (v) => v === 2
    )
    await waitFor(
      "quick done",
      () => c.get(k.processedTotal),
      (n) => n === "1"
    )
    const requeued = await srv.shutdown()
    expect(requeued).toBe(2)
    expect((await c.lrange(k.pending, 0, -1)).sort()).toEqual([...stuck].sort())
    expect(await c.llen(k.active)).toBe(0)
    expect(await c.zcard(k.lease)).toBe(0)
    for (const id of stuck) {
      const t = await readTask(c, "inflight", id)
      expect(t.fields.state).toBe("pending")
      expect(t.msg!.retried).toBe(0)
    }
  })

  it("archives a task whose msg is corrupt with a clear error, while the others finish", async () => {
    const k = queueKeys("corrupt")
    await putPendingBytes(c, "corrupt", "bad-1", Buffer.from([0xff, 0xff, 0xff, 0x01]))
    const done: Array<number> = []
    const srv = await startServer(
      { ok: async (task) => void done.push(task.json<number>()) },
      { concurrency: 2, queues: { corrupt: 1 } }
    )
    try {
      for (let i = 0; i < 5; i++) await srv.enqueue("ok", i, { queue: "corrupt" })
      await waitFor(
        "five done",
        () => done.length,
        (v) => v === 5
      )
      await waitFor(
        "corrupt archived",
        () => c.zcard(k.archived),
        (n) => n === 1
      )
      const bad = await c.hgetall(k.task("bad-1"))
      expect(bad.state).toBe("archived")
      expect(bad.error).toMatch(/^asynq: task message is corrupt: /)
    } finally {
      await srv.shutdown()
    }
  })

  it("stops a handler whose lease was lost and writes nothing for it", async () => {
    let abortedWith: unknown
    let started = false
    const srv = await startServer(
      {
        lease: (_t: Task, signal: AbortSignal) =>
          new Promise<void>(() => {
            started = true
            signal.addEventListener("abort", () => (abortedWith = signal.reason))
          })
      },
      { concurrency: 1, queues: { lease: 1 }, leaseMs: 3000, heartbeatIntervalMs: 100 }
    )
    try {
      const k = queueKeys("lease")
      const id = await srv.enqueue("lease", undefined, { queue: "lease" })
      await waitFor("running", () => started)
      // Someone else (a recoverer) took the task: it is no longer in active/lease.
      await c
        .multi()
        .lrem(k.active, 0, id)
        .zrem(k.lease, id)
        .hset(k.task(id), "state", "retry")
        .zadd(k.retry, 1, id)
        .exec()
      await waitFor(
        "handler stopped",
        () => abortedWith,
        (v) => v !== undefined
      )
      await waitFor(
        "slot free",
        () => srv.handle.activeCount(),
        (v) => v === 0
      )
      expect(String((abortedWith as Error).message)).toBe("task lease lost")
      const t = await readTask(c, "lease", id)
      expect(t.fields.state).toBe("retry")
      expect(t.msg!.retried).toBe(0)
      expect(await c.get(k.processedTotal)).toBeNull()
    } finally {
      await srv.shutdown()
    }
  })

  it("heartbeat extends running tasks' leases from the Effect clock (TestClock)", async () => {
    const msg = makeMsg("hb", "hb-1")
    await putActive(c, msg, baseNowMs / 1000 + 30)
    const registry = makeRegistry()
    const entry = makeActiveTask(msg, baseNowMs, baseNowMs + 30_000)
    registry.add(entry)
    await runBroker(
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const fiber = yield* Effect.forkChild(heartbeatLoop(registry, 30_000, 5000))
        yield* TestClock.adjust("5 seconds")
        yield* Effect.yieldNow
        yield* Effect.promise(() =>
          waitFor(
            "lease extended",
            () => zsetOf(c, queueKeys("hb").lease),
            (lease) => lease[0]![1] === baseNowMs / 1000 + 35
          )
        )
        yield* Effect.promise(() =>
          waitFor(
            "registry updated",
            () => entry.leaseExpiresAtMs,
            (v) => v === baseNowMs + 35_000
          )
        )
        // Let the heartbeat fiber reach its next sleep before the clock moves (else that sleep starts
        // after the move). TestClock does not show its pending sleeps, so there is no condition to wait
        // on: a short real pause, far longer than the few synchronous steps from the write to the sleep.
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
        yield* TestClock.adjust("5 seconds")
        yield* Effect.promise(() =>
          waitFor(
            "lease extended again",
            () => zsetOf(c, queueKeys("hb").lease),
            (lease) => lease[0]![1] === baseNowMs / 1000 + 40
          )
        )
        yield* Effect.promise(() =>
          waitFor(
            "registry updated",
            () => entry.leaseExpiresAtMs,
            (v) => v === baseNowMs + 40_000
          )
        )
        // The lease disappears (recovered elsewhere): the next beat stops the task.
        yield* Effect.promise(() => c.zrem(queueKeys("hb").lease, "hb-1"))
        const stopped = yield* extendLeasesOnce(registry, 30_000)
        expect(stopped).toEqual(["hb-1"])
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
  })
})
