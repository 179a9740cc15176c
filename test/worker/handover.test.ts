/**
 * Hand-overs to a parked worker that stalls or dies, with real worker processes (`effect-asynq
 * worker`, test/worker/fixtures/handoverHandlers.ts: a 10 s lease, a recoverer with no grace) on
 * the test Redis. Two workers are parked on one queue; a producer enqueues a task every 100 ms with
 * `maxRetry: 0`; one worker is frozen with SIGSTOP (its connections stay open, so it still looks
 * subscribed) or killed with SIGKILL right after tasks were handed to it. Nothing is archived or
 * retried that never ran, and every task runs while the frozen worker is still frozen: what was
 * handed to it comes back to pending within seconds (it was never confirmed) and the idle worker
 * runs it, instead of waiting out the stall or the lease.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Client, createClient } from "../../src/client.js"
import { queueKeys } from "../../src/wire/keys.js"
import { waitFor } from "../support/waitFor.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { spawnWorker, type WorkerProcess } from "./support.js"

let c: IORedis
let client: Client
const children: Array<WorkerProcess> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  client = createClient({ url: testRedisUrl() })
})
afterAll(async () => {
  for (const w of children) {
    if (w.child.exitCode !== null || w.child.signalCode !== null) continue
    w.child.kill("SIGCONT")
    w.child.kill("SIGKILL")
  }
  await client.close()
  c.disconnect()
})

const start = (queue: string) => {
  const w = spawnWorker(
    testRedisUrl(),
    ["--queues", `${queue}=1`, "--concurrency", "5"],
    {},
    "test/worker/fixtures/handoverHandlers.ts"
  )
  children.push(w)
  return w
}

/** The server id of worker `w` (from its asynq:servers entry), once it is parked on `queue`. */
const parkedServerId = async (w: WorkerProcess, queue: string): Promise<string> => {
  const key = await waitFor(
    `worker ${w.child.pid} listed`,
    () => c.keys(`asynq:servers:{*:${w.child.pid}:*}`),
    (keys) => keys.length === 1,
    { timeoutMs: 90_000 }
  )
  const id = /:(\d+):([^}]+)\}$/.exec(key[0]!)![2]!
  await waitFor(
    `worker ${w.child.pid} parked`,
    () => c.hexists(queueKeys(queue).parked, id),
    (n) => n === 1,
    { timeoutMs: 30_000 }
  )
  return id
}

/** Each run the workers wrote on stdout: task id → the times (unix ms) its runs started. */
const runsOf = (workers: ReadonlyArray<WorkerProcess>) => {
  const runs = new Map<string, Array<number>>()
  for (const w of workers) {
    for (const m of w.output().matchAll(/^ran (\S+) (\d+)$/gm)) {
      const times = runs.get(m[1]!) ?? []
      times.push(Number(m[2]))
      runs.set(m[1]!, times)
    }
  }
  return runs
}

/** Enqueues a task every 100 ms (maxRetry 0) until stopped; `ids` in order. */
const trickle = (queue: string) => {
  const ids: Array<string> = []
  let stopped = false
  const done = (async () => {
    for (let n = 0; !stopped; n++) {
      ids.push((await client.enqueue("test:job", { n }, { queue, maxRetry: 0 })).id)
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  return {
    ids,
    stop: async () => {
      stopped = true
      await done
    }
  }
}

/** The tasks of `queue` still waiting or running, and the ones archived or in retry. */
const leftIn = async (queue: string) => {
  const k = queueKeys(queue)
  const [pending, active, retry, archived] = await Promise.all([
    c.lrange(k.pending, 0, -1),
    c.lrange(k.active, 0, -1),
    c.zrange(k.retry, "0", "-1"),
    c.zrange(k.archived, "0", "-1")
  ])
  return { waiting: pending.length + active.length, retried: retry, archived }
}

/**
 * Two parked workers on `queue` under a trickling producer; once tasks run, worker `a` is frozen
 * (SIGSTOP) and this waits until a task was handed to it while frozen (it still looks parked and
 * subscribed for a moment). `frozenAt`: a run `a` wrote before it is one it started before it froze.
 */
const stallParkedWorker = async (queue: string) => {
  const a = start(queue)
  const b = start(queue)
  const aId = await parkedServerId(a, queue)
  await parkedServerId(b, queue)
  const producer = trickle(queue)
  await waitFor(
    "some tasks run",
    () => runsOf([a, b]).size,
    (n) => n >= 5,
    { timeoutMs: 20_000 }
  )
  a.child.kill("SIGSTOP")
  const frozenAt = Date.now() + 100
  await waitFor(
    "a task handed to the frozen worker",
    () => c.llen(queueKeys(queue).pushList(aId)),
    (n) => n > 0,
    { timeoutMs: 10_000 }
  )
  return { a, b, producer, frozenAt }
}

describe("a parked worker that stalls or dies, under a trickling producer (real processes, maxRetry 0, a 10 s lease)", () => {
  it("SIGSTOP: every task runs while the frozen worker is still frozen, and nothing is archived or retried that never ran", async () => {
    const queue = "stall"
    const { a, b, producer, frozenAt } = await stallParkedWorker(queue)
    // Well past its lease (10 s): on a frozen worker's token, hand-overs would be archived unrun.
    await new Promise((r) => setTimeout(r, 14_000))
    await producer.stop()
    const enqueued = [...producer.ids]
    // What the frozen worker started before it froze is its own; everything else runs on the other one meanwhile.
    const ranOnA = new Set([...runsOf([a])].filter(([, times]) => times.some((t) => t < frozenAt)).map(([id]) => id))
    const notRun = async () => {
      const runs = runsOf([a, b])
      return enqueued.filter((id) => !runs.has(id) && !ranOnA.has(id))
    }
    await waitFor("every task to run while the worker is frozen", notRun, (ids) => ids.length === 0, {
      timeoutMs: 20_000
    })
    const left = await leftIn(queue)
    const runs = runsOf([a, b])
    expect([...left.archived, ...left.retried].filter((id) => !runs.has(id))).toEqual([])
    a.child.kill("SIGCONT")
    await waitFor(
      "the queue empty",
      () => leftIn(queue),
      (l) => l.waiting === 0,
      { timeoutMs: 20_000 }
    )
    // After it woke up: still nothing archived or retried that never ran; a task ran twice only if
    // the frozen worker had started it (a hand-over it had popped but not started, it did not start).
    const after = await leftIn(queue)
    const final = runsOf([a, b])
    expect([...after.archived, ...after.retried].filter((id) => !final.has(id))).toEqual([])
    expect(enqueued.filter((id) => !final.has(id))).toEqual([])
    expect([...final].filter(([id, times]) => times.length > 1 && !ranOnA.has(id)).map(([id]) => id)).toEqual([])
    a.child.kill("SIGKILL")
    b.child.kill("SIGKILL")
  }, 240_000)

  it("SIGKILL right after tasks were handed over: they run on the other worker within seconds, and nothing is archived or retried that never ran", async () => {
    const queue = "killed"
    // Frozen first, so that tasks are surely on their way to it when it dies (in its hand-over list).
    const { a, b, producer, frozenAt } = await stallParkedWorker(queue)
    a.child.kill("SIGKILL")
    await a.exited
    await new Promise((r) => setTimeout(r, 3000))
    await producer.stop()
    const enqueued = [...producer.ids]
    const notRun = async () => {
      const runs = runsOf([a, b])
      return enqueued.filter((id) => !runs.has(id))
    }
    // Well within the lease (10 s) of what was handed to the dead worker.
    await waitFor("every task to run", notRun, (ids) => ids.length === 0, { timeoutMs: 20_000 })
    await waitFor(
      "the queue empty",
      () => leftIn(queue),
      (l) => l.waiting === 0,
      { timeoutMs: 20_000 }
    )
    const left = await leftIn(queue)
    const runs = runsOf([a, b])
    expect([...left.archived, ...left.retried].filter((id) => !runs.has(id))).toEqual([])
    // A task ran twice only if the dead worker had started it before it froze.
    const ranOnA = new Set([...runsOf([a])].filter(([, times]) => times.some((t) => t < frozenAt)).map(([id]) => id))
    expect([...runs].filter(([id, times]) => times.length > 1 && !ranOnA.has(id)).map(([id]) => id)).toEqual([])
    b.child.kill("SIGKILL")
  }, 240_000)
})
