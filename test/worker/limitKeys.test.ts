/**
 * Per-key limits across real worker processes (`effect-asynq worker`): three workers on one queue
 * never run more than a key's concurrency (2) of one key at once, over 1,000 keys, observed with a
 * shared counter per key in Redis (test/worker/fixtures/keyHandlers.ts); every task runs exactly
 * once. A worker SIGKILLed while keyed tasks run: after recovery nothing is lost and no key's place
 * leaks (the keys' waiting tasks still run).
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type Client, createClient } from "../../src/client.js"
import { createInspector, type Inspector } from "../../src/inspector/promise.js"
import { queueKeys } from "../../src/wire/keys.js"
import { waitFor } from "../support/waitFor.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { spawnWorker, type WorkerProcess } from "./support.js"

let c: IORedis
let client: Client
let inspector: Inspector
let children: Array<WorkerProcess> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  client = createClient({ url: testRedisUrl() })
  inspector = createInspector({ url: testRedisUrl() })
})
const stopAll = async () => {
  for (const w of children) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
  await Promise.all(children.map((w) => w.exited))
  children = []
}
afterEach(stopAll)
afterAll(async () => {
  await stopAll()
  await client.close()
  await inspector.close()
  c.disconnect()
})

const start = (queue: string, concurrency: number, env: Record<string, string>) => {
  const w = spawnWorker(
    testRedisUrl(),
    ["--queues", `${queue}=1`, "--concurrency", String(concurrency)],
    env,
    "test/worker/fixtures/keyHandlers.ts"
  )
  children.push(w)
  return w
}

const registered = (ws: ReadonlyArray<WorkerProcess>) =>
  waitFor(
    "workers registered",
    () => c.keys("asynq:servers:{*}"),
    (keys) => ws.every((w) => keys.some((k) => k.includes(`:${w.child.pid}:`))),
    { timeoutMs: 90_000 }
  )

/** Enqueues `perKey` tasks for each key (in batches); returns how many. */
const fill = async (queue: string, keys: ReadonlyArray<string>, perKey: number) => {
  const items = keys.flatMap((key) =>
    Array.from({ length: perKey }, (_, i) => ({
      type: "key:job",
      payload: { key, i },
      options: { queue, limitKey: key }
    }))
  )
  for (let i = 0; i < items.length; i += 500) {
    const out = await client.enqueueMany(items.slice(i, i + 500))
    expect(out.every((o) => o.ok)).toBe(true)
  }
  return items.length
}

/** Nothing left anywhere: no pending, scheduled, retry, archived or active task, no key waiting. */
const expectDrained = async (queue: string) => {
  const k = queueKeys(queue)
  expect({
    pending: await c.llen(k.pending),
    scheduled: await c.zcard(k.scheduled),
    retry: await c.zcard(k.retry),
    archived: await c.zcard(k.archived),
    active: await c.llen(k.active),
    waitingKeys: await c.zcard(k.limitKeys)
  }).toEqual({ pending: 0, scheduled: 0, retry: 0, archived: 0, active: 0, waitingKeys: 0 })
}

describe("per-key limits across worker processes", () => {
  it("a per-key concurrency of 2 over 1,000 keys is never exceeded by three workers, and is reached; every task runs once", {
    timeout: 180_000
  }, async () => {
    const queue = "keys-conc"
    // 1,000 keys with two tasks each, and ten busy keys with forty each (held at their cap).
    const cold = Array.from({ length: 1000 }, (_, i) => `customer:${i}`)
    const hot = Array.from({ length: 10 }, (_, i) => `busy:${i}`)
    const n = (await fill(queue, cold, 2)) + (await fill(queue, hot, 40))
    await inspector.setQueueLimit(queue, { perKey: { concurrency: 2 } })
    expect((await inspector.getQueueInfo(queue)).limit).toEqual({ perKey: { concurrency: 2 } })
    const ws = [0, 1, 2].map(() => start(queue, 8, { WORK_MS: "15", KEY_CAP: "2" }))
    await registered(ws)
    await waitFor(
      "every task ran",
      () => c.hlen("key:runs"),
      (r) => r === n,
      { timeoutMs: 120_000 }
    )
    expect(Number((await c.get("key:over")) ?? "0")).toBe(0)
    expect(Number(await c.get("key:max"))).toBe(2)
    const runs = await c.hgetall("key:runs")
    expect(Object.keys(runs)).toHaveLength(n)
    expect(Object.values(runs).every((v) => v === "1")).toBe(true)
    expect(await c.get(queueKeys(queue).failedTotal)).toBeNull()
    await waitFor(
      "none active",
      () => c.llen(queueKeys(queue).active),
      (a) => a === 0
    )
    await expectDrained(queue)
  })

  it("an idle worker (parked on the empty queue) runs keyed tasks enqueued later", { timeout: 120_000 }, async () => {
    await c.del("key:runs", "key:now", "key:max", "key:over", "key:tokens")
    const queue = "keys-idle"
    await client.enqueue("key:warm", {}, { queue })
    await inspector.setQueueLimit(queue, { perKey: { concurrency: 1 } })
    const w = start(queue, 4, { KEY_CAP: "1" })
    await registered([w])
    await waitFor(
      "the first task ran",
      () => c.hlen("key:runs"),
      (r) => r === 1,
      { timeoutMs: 60_000 }
    )
    const n = 1 + (await fill(queue, ["late:1", "late:2"], 5))
    await waitFor(
      "the keyed tasks ran",
      () => c.hlen("key:runs"),
      (r) => r === n,
      { timeoutMs: 30_000 }
    )
    expect(Number((await c.get("key:over")) ?? "0")).toBe(0)
    await waitFor(
      "none active",
      () => c.llen(queueKeys(queue).active),
      (a) => a === 0
    )
    await expectDrained(queue)
  })

  it("a worker SIGKILLed while keyed tasks run: after recovery nothing is lost and no key's place leaks", {
    timeout: 180_000
  }, async () => {
    await c.del("key:runs", "key:now", "key:max", "key:over", "key:tokens")
    const queue = "keys-kill"
    const keys = Array.from({ length: 20 }, (_, i) => `tenant:${i}`)
    const n = await fill(queue, keys, 5)
    await inspector.setQueueLimit(queue, { perKey: { concurrency: 1 } })
    const a = start(queue, 10, { WORK_MS: "300", KEY_CAP: "1" })
    await registered([a])
    await waitFor(
      "some ran",
      () => c.hlen("key:runs"),
      (r) => r >= 15,
      { timeoutMs: 60_000 }
    )
    a.child.kill("SIGKILL")
    expect(await a.exited).toBeNull()
    const inFlight = await c.llen(queueKeys(queue).active)
    expect(inFlight).toBeGreaterThan(0)
    // The killed worker's keys hold their place in the count (their tasks are still active) until
    // the recoverer takes the tasks back; then their waiting tasks run.
    const b = start(queue, 10, { WORK_MS: "20", KEY_CAP: "1" })
    await registered([b])
    await waitFor(
      "every task ran",
      () => c.hlen("key:runs"),
      (r) => r === n,
      { timeoutMs: 60_000 }
    )
    await waitFor(
      "none active",
      () => c.llen(queueKeys(queue).active),
      (x) => x === 0
    )
    const runs = Object.values(await c.hgetall("key:runs")).map(Number)
    expect(runs).toHaveLength(n)
    // A task runs again only when it was in flight at the kill.
    expect(runs.reduce((s, x) => s + x, 0) - n).toBeLessThanOrEqual(inFlight)
    await expectDrained(queue)
    // No key's leased set holds a task that is not running.
    for (const key of keys) expect(await c.scard(queueKeys(queue).limitKeyActive(key))).toBe(0)
  })
})
