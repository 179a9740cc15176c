/**
 * Keep-last-while-active across three `effect-asynq worker` processes (2 slots each): while a key's
 * task runs, the key's enqueues leave one waiting task, which runs after it with the last payload;
 * never two of the key at once (a shared set of running attempts in Redis,
 * test/worker/fixtures/keepLastHandlers.ts). When the worker running the current task is
 * SIGKILLed, the waiting task still waits: the current task's lease runs out, it is retried on
 * another worker, and only once it completes does the waiting one run.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type Client, createClient } from "../../src/client.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { spawnWorker, type WorkerProcess } from "./support.js"

let c: IORedis
let client: Client
let children: Array<WorkerProcess> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  client = createClient({ url: testRedisUrl() })
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
  c.disconnect()
})

const queue = "kl-procs"
const k = queueKeys(queue)
const enq = (n: number) => client.enqueueKeepLast("kl:job", { n }, { key: "doc:1" }, { queue })
const order = async () => (await c.lrange("kl:order", "0", "-1")).map(Number)

describe("keep-last-while-active across three worker processes", () => {
  it("collapses to the last payload, runs it after the current one, never two at once; survives a SIGKILL of the worker running the current one", {
    timeout: 180_000
  }, async () => {
    for (let i = 0; i < 3; i++)
      children.push(
        spawnWorker(
          testRedisUrl(),
          ["--queues", `${queue}=1`, "--concurrency", "2"],
          { WORK_MS: "800" },
          "test/worker/fixtures/keepLastHandlers.ts"
        )
      )
    await waitFor(
      "three workers registered",
      () => c.keys("asynq:servers:{*}"),
      (keys) => children.every((w) => keys.some((key) => key.includes(`:${w.child.pid}:`))),
      { timeoutMs: 90_000 }
    )
    expect((await enq(0)).waiting).toBe(false)
    await waitFor("the first running", order, (o) => o.length === 1)
    for (let n = 1; n <= 30; n++) expect((await enq(n)).waiting).toBe(true)
    await waitFor(
      "the last ran and the key is free",
      async () => ({ order: await order(), key: await c.exists(k.keepLast("doc:1")), live: await c.scard("kl:live") }),
      (s) => s.order.length === 2 && s.key === 0 && s.live === 0,
      { timeoutMs: 30_000 }
    )
    expect(await order()).toEqual([0, 30])
    expect(await c.get("kl:max")).toBe("1")

    // The worker running the current task is killed.
    await c.del("kl:order")
    expect((await enq(100)).waiting).toBe(false)
    await waitFor(
      "100 running",
      () => c.smembers("kl:live"),
      (live) => live.length === 1,
      { timeoutMs: 10_000 }
    )
    const [token] = await c.smembers("kl:live")
    const pid = Number(token!.split(":")[0])
    const victim = children.find((w) => w.child.pid === pid)!
    victim.child.kill("SIGKILL")
    await victim.exited
    await c.srem("kl:live", token!)
    for (let n = 101; n <= 110; n++) expect((await enq(n)).waiting).toBe(true)
    await waitFor(
      "the retried current one and then the last ran; the key is free",
      async () => ({ order: await order(), key: await c.exists(k.keepLast("doc:1")), live: await c.scard("kl:live") }),
      (s) => s.order.length === 3 && s.key === 0 && s.live === 0,
      { timeoutMs: 60_000 }
    )
    expect(await order()).toEqual([100, 100, 110])
    expect(await c.get("kl:max")).toBe("1")
    expect({
      pending: await c.llen(k.pending),
      scheduled: await c.zcard(k.scheduled),
      retry: await c.zcard(k.retry)
    }).toEqual({
      pending: 0,
      scheduled: 0,
      retry: 0
    })
  })
})
