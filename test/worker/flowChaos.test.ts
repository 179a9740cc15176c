/**
 * Flow control under failures, with real processes: a queue with a rate limit and a concurrency
 * cap served by three `effect-asynq worker` processes, some of its tasks returning RateLimited on
 * their first attempt. (1) One worker is SIGKILLed mid-run and a new one started; (2) the Redis
 * server itself is SIGKILLed and started again on its port with its data (append-only file,
 * fsync always), half the tasks carrying a limit key with a per-key cap of 1. Every task runs; none runs twice, except in (1) the tasks the killed worker held
 * (at-least-once: those in the active list at the kill), which are the only ones counted as failed;
 * no RateLimited attempt is counted as a failure or a retry; the cap is never exceeded (a shared
 * set of running attempts in Redis, test/worker/fixtures/chaosHandlers.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis as IORedis } from "ioredis"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type Client, createClient } from "../../src/client.js"
import { createInspector } from "../../src/inspector/promise.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { freePort, redisServerBinary, waitForPing } from "../support/redis-server.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { spawnWorker, type WorkerProcess } from "./support.js"

let children: Array<WorkerProcess> = []
const stopAll = async () => {
  for (const w of children) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
  await Promise.all(children.map((w) => w.exited))
  children = []
}
afterEach(stopAll)

const cap = 4
const n = 400

/** The limit keys of the keyed run: every other task carries one of them (each has 40 tasks). */
const limitKeys = ["k0", "k2", "k4", "k6", "k8"]

/**
 * Fills `queue` (every 10th task returns RateLimited once; with `keyed`, every other task carries a
 * limit key, with a per-key concurrency of 1), sets its limit, starts three workers; resolves once
 * they are registered.
 */
const arrange = async (url: string, c: IORedis, queue: string, env: Record<string, string>, keyed = false) => {
  const client: Client = createClient({ url })
  const inspector = createInspector({ url })
  try {
    for (let i = 0; i < n; i += 200) {
      const out = await client.enqueueMany(
        Array.from({ length: Math.min(200, n - i) }, (_, j) => {
          const key = keyed && (i + j) % 2 === 0 ? `k${(i + j) % 10}` : undefined
          return {
            type: "chaos:job",
            payload: { n: i + j, limited: (i + j) % 10 === 0, ...(key ? { key } : {}) },
            options: { queue, retention: 600_000, ...(key ? { limitKey: key } : {}) }
          }
        })
      )
      expect(out.every((o) => o.ok)).toBe(true)
    }
    await inspector.pauseQueue(queue)
    await inspector.setQueueLimit(queue, {
      rate: { limit: 150, per: "1s" },
      concurrency: cap,
      ...(keyed ? { perKey: { concurrency: 1 } } : {})
    })
    for (let i = 0; i < 3; i++) children.push(start(url, queue, env))
    await waitFor(
      "three workers registered",
      () => c.keys("asynq:servers:{*}"),
      (keys) => children.every((w) => keys.some((k) => k.includes(`:${w.child.pid}:`))),
      { timeoutMs: 90_000 }
    )
    await inspector.unpauseQueue(queue)
  } finally {
    await client.close()
    await inspector.close()
  }
}

const start = (url: string, queue: string, env: Record<string, string>) =>
  spawnWorker(url, ["--queues", `${queue}=1`, "--concurrency", "3"], env, "test/worker/fixtures/chaosHandlers.ts")

/** Task id -> how many attempts ran it (RateLimited attempts apart). */
const countBy = async (c: IORedis, key: string) => {
  const by = new Map<string, number>()
  for (const id of Object.values(await c.hgetall(key))) by.set(id, (by.get(id) ?? 0) + 1)
  return by
}

/** Waits for every task to be completed; then checks what every test asserts, and returns the completed tasks' retried counts. */
const finish = async (c: IORedis, queue: string) => {
  const k = queueKeys(queue)
  await waitFor(
    `all ${n} completed`,
    async () => ({ completed: await c.zcard(k.completed), live: await c.scard("flow:live") }),
    (s) => s.completed === n && s.live === 0,
    { timeoutMs: 120_000 }
  )
  expect({
    pending: await c.llen(k.pending),
    active: await c.llen(k.active),
    retry: await c.zcard(k.retry),
    scheduled: await c.zcard(k.scheduled),
    archived: await c.zcard(k.archived)
  }).toEqual({ pending: 0, active: 0, retry: 0, scheduled: 0, archived: 0 })
  // The cap held across the workers, and was reached.
  expect(Number(await c.get("flow:max"))).toBe(cap)
  // Each task marked limited returned RateLimited exactly once, and ran after.
  const limited = await countBy(c, "flow:limited")
  expect(limited.size).toBe(n / 10)
  expect([...limited.values()].every((x) => x === 1)).toBe(true)
  const runs = await countBy(c, "flow:runs")
  expect(runs.size).toBe(n)
  const retried = new Map<string, number>()
  for (const id of await c.zrange(k.completed, "0", "-1")) {
    const msg = decodeTaskMessage((await c.hgetBuffer(k.task(id), "msg"))!)
    if (msg.retried > 0) retried.set(id, msg.retried)
  }
  return { runs, retried, failed: Number((await c.get(k.failedTotal)) ?? "0") }
}

describe("flow control across worker processes, under failures", () => {
  it("a worker SIGKILLed mid-run and a new one started: nothing lost; only the killed worker's tasks run twice and count as failed; RateLimited never does; the cap holds", {
    timeout: 240_000
  }, async () => {
    await flushTestDb()
    const c = new IORedis(testRedisUrl())
    try {
      const queue = "chaos-kill"
      await arrange(testRedisUrl(), c, queue, { WORK_MS: "15", LEASE_MS: "2000" })
      await waitFor(
        "a third ran",
        () => c.hlen("flow:runs"),
        (r) => r >= n / 3,
        { timeoutMs: 60_000 }
      )
      const victim = children[0]!
      victim.child.kill("SIGKILL")
      await victim.exited
      // The tasks the killed worker may hold are among those active now; its attempts no longer run.
      const heldAtKill = new Set(await c.lrange(queueKeys(queue).active, "0", "-1"))
      const pid = `${victim.child.pid}:`
      const stale = (await c.smembers("flow:live")).filter((t) => t.startsWith(pid))
      if (stale.length > 0) await c.srem("flow:live", ...stale)
      children.push(start(testRedisUrl(), queue, { WORK_MS: "15", LEASE_MS: "2000" }))
      const { runs, retried, failed } = await finish(c, queue)
      const twice = [...runs].filter(([, x]) => x > 1).map(([id]) => id)
      expect(twice.every((id) => heldAtKill.has(id) && runs.get(id) === 2)).toBe(true)
      expect(twice.length).toBeLessThanOrEqual(3)
      // Failures: exactly the recovered attempts (asynq counts a lease that ran out as a failed attempt).
      expect([...retried.keys()].every((id) => heldAtKill.has(id))).toBe(true)
      expect(failed).toBe([...retried.values()].reduce((a, b) => a + b, 0))
      expect(failed).toBeLessThanOrEqual(3)
    } finally {
      c.disconnect()
    }
  })

  describe("a Redis restart", () => {
    let dir: string
    let port: number
    let proc: ChildProcess | undefined
    const url = () => `redis://127.0.0.1:${port}`
    const startRedis = () => {
      proc = spawn(
        redisServerBinary(),
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--save",
          "",
          "--appendonly",
          "yes",
          "--appendfsync",
          "always",
          "--dir",
          dir
        ],
        { stdio: "ignore" }
      )
      return waitForPing(port, 10_000, proc)
    }
    const killRedis = async () => {
      const p = proc
      if (p === undefined || p.exitCode !== null || p.signalCode !== null) return
      await new Promise<void>((resolve) => {
        p.once("exit", () => resolve())
        p.kill("SIGKILL")
      })
    }
    afterAll(async () => {
      await stopAll()
      await killRedis()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it("SIGKILLed and started again on its port with its data: every task runs once, none counted as failed, the cap and the per-key cap hold", {
      timeout: 240_000
    }, async () => {
      dir = mkdtempSync(join(tmpdir(), "effect-asynq-flow-restart-"))
      port = await freePort()
      await startRedis()
      const c = new IORedis(url(), { maxRetriesPerRequest: null })
      c.on("error", () => {})
      try {
        const queue = "chaos-restart"
        await arrange(url(), c, queue, { WORK_MS: "15" }, true)
        await waitFor(
          "a third ran",
          () => c.hlen("flow:runs"),
          (r) => r >= n / 3,
          { timeoutMs: 60_000 }
        )
        await killRedis()
        await new Promise((r) => setTimeout(r, 300))
        await startRedis()
        // The limit came back with the data.
        expect(await c.hget(queueKeys(queue).flow, "concurrency")).toBe(String(cap))
        const { runs, retried, failed } = await finish(c, queue)
        // Each key's cap of 1 held across the workers and the restart (and each key ran).
        for (const key of limitKeys) expect([key, await c.get(`flow:kmax:${key}`)]).toEqual([key, "1"])
        expect([...runs.values()].every((x) => x === 1)).toBe(true)
        expect(retried.size).toBe(0)
        expect(failed).toBe(0)
      } finally {
        c.disconnect()
      }
    })
  })
})
