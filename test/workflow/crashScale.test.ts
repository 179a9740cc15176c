/**
 * The crash test at scale (issue 33): 200 executions of a workflow with five activities, a 2 s
 * durable sleep (a durable clock: a scheduled task in Redis, not an in-memory sleep) and a
 * deferred completed from this process at seeded random moments, while worker processes are
 * SIGKILLed at seeded random points (when their activity log reached a random length, or after a
 * random time) and a new one started after each kill. Afterwards: every execution completed with
 * its result; one stored exit per (execution, activity, attempt), the right one; nothing left
 * running, pending or queued (no orphan run or clock task); and each activity body ran once, plus
 * once more for every kill that caught it in flight (started, exit not stored), never otherwise.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { DurableDeferred, type WorkflowEngine } from "effect/workflow"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, expect, it } from "vitest"
import { queueKeys } from "../../src/wire/keys.js"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import { controlQueueOf, controlQueues, createDeferredClient, type DeferredClient } from "../../src/workflow/index.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { Approval, Scale, scaleLogKey, scaleQueues, scaleResult, scaleSteps } from "./fixtures/scaleWorkflow.js"
import { engineLayer, makeRuntime } from "./support.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
/** The seed of every random choice of the test (kill points, deferred completion times); WF_CRASH_SEED replays another. */
const seed = Number(process.env.WF_CRASH_SEED ?? 33_2026)
const executions = 200
const kills = 4

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
const prng = (s: number) => () => {
  s = (s + 0x6d2b79f5) | 0
  let t = Math.imul(s ^ (s >>> 15), 1 | s)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

let c: IORedis
const children: Array<ChildProcess> = []
let deferreds: DeferredClient | undefined
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  await deferreds?.close()
  c.disconnect()
})

/**
 * The local TCP ports of a process's sockets (Linux /proc), i.e. the `addr` ports Redis lists its
 * connections under; empty where /proc is not there.
 */
const localPorts = (pid: number): ReadonlyArray<number> => {
  const inodes = new Set<string>()
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
        if (m) inodes.add(m[1]!)
      } catch {}
    }
  } catch {
    return []
  }
  const ports: number[] = []
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = ""
    try {
      text = readFileSync(file, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.push(Number.parseInt(cols[1]!.split(":")[1]!, 16))
    }
  }
  return ports
}

const spawnWorker = (gen: number) => {
  const child = spawn(process.execPath, ["--import", "tsx", "test/workflow/fixtures/scaleWorker.ts"], {
    cwd: root,
    env: { ...process.env, REDIS_URL: testRedisUrl(), GEN: String(gen) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  children.push(child)
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code))
  )
  const ready = () =>
    waitFor(
      `worker ${gen} ready`,
      () => out,
      (o) => o.includes("ready\n"),
      { timeoutMs: 30_000 }
    ).then(() => undefined)
  return { child, exited, ready, output: () => out }
}

it(`${executions} workflows (5 activities, a 2 s durable sleep, a deferred) through ${kills} SIGKILLed workers: all complete, each result stored once, nothing stuck`, async () => {
  const rng = prng(seed)
  const ns = Array.from({ length: executions }, (_, i) => i)
  const queues = controlQueues(scaleQueues, Scale._tag)
  const execKey = (id: string) => workflowExecutionKey(controlQueueOf(scaleQueues, Scale._tag, id), id)

  // Started from a process that registers nothing (it only starts executions).
  const starter = makeRuntime(
    engineLayer("redis", scaleQueues.queue, { shards: scaleQueues.shards }),
    Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
  )
  const ids = await starter
    .runPromise(Effect.forEach(ns, (n) => Scale.execute({ n }, { discard: true }), { concurrency: 20 }))
    .finally(() => starter.dispose())
  const keyOf = new Map(ns.map((n) => [n, execKey(ids[n]!)]))

  // Each deferred completed from here at a seeded moment 0.5–10 s in: some before the execution
  // reaches it (kept for its run), most while it waits (a wake), some across a kill.
  const tokens = await Effect.runPromise(
    Effect.forEach(ns, (n) => DurableDeferred.tokenFromPayload(Approval, { workflow: Scale, payload: { n } }))
  )
  const delays = ns.map(() => 500 + Math.floor(rng() * 9_500))
  const client = (deferreds = createDeferredClient({ ...scaleQueues, redis: testRedisUrl() }))
  const completions = Promise.all(
    ns.map((n) => sleep(delays[n]!).then(() => client.succeed(Approval, tokens[n]!, `ok-${n}`)))
  )

  /** Per "<n> <activity>": how many kills caught its body in flight (started in the killed process, its exit not stored). */
  const inFlightAtKills = new Map<string, number>()
  let sleepingAtKills = 0
  let gen = 0
  for (; gen < kills; gen++) {
    const worker = spawnWorker(gen)
    await worker.ready()
    // A seeded kill point: once 20–220 more activity bodies have started, or after 0.3–3 s.
    const target = (await c.llen(scaleLogKey)) + 20 + Math.floor(rng() * 200)
    const deadline = performance.now() + 300 + rng() * 2_700
    while (performance.now() < deadline && (await c.llen(scaleLogKey)) < target) await sleep(5)
    const ports = localPorts(worker.child.pid!)
    worker.child.kill("SIGKILL")
    expect(await worker.exited).toBe("SIGKILL")
    // Redis may still hold commands the process wrote before it died, unread: wait until it closed
    // the process's connections (it reads what they hold first). Then nothing more comes from it,
    // and what it started and did not store was in flight at the kill.
    await waitFor(
      `worker ${gen}'s connections closed by Redis`,
      () => c.client("LIST") as Promise<string>,
      (list) => {
        const open = new Set([...list.matchAll(/\baddr=\S*:(\d+) /g)].map((m) => Number(m[1])))
        return !ports.some((p) => open.has(p))
      },
      { timeoutMs: 10_000 }
    )
    if (ports.length === 0) await sleep(200)
    for (const entry of await c.lrange(scaleLogKey, 0, -1)) {
      const [g, n, name] = entry.split(" ")
      if (g !== String(gen)) continue
      if ((await c.hexists(keyOf.get(Number(n))!, `a:${name}/1`)) === 0)
        inFlightAtKills.set(`${n} ${name}`, (inFlightAtKills.get(`${n} ${name}`) ?? 0) + 1)
    }
    for (const q of queues) sleepingAtKills += await c.zcard(queueKeys(q).scheduled)
  }
  const last = spawnWorker(gen)
  try {
    const states = () => Promise.all(ns.map((n) => c.hget(keyOf.get(n)!, "state")))
    await waitFor("every execution complete", states, (s) => s.every((x) => x === "complete"), {
      timeoutMs: 60_000
    }).catch((e) => {
      throw new Error(`${e}\nlast worker's output:\n${last.output()}`)
    })
    expect(await completions).toEqual(ns.map(() => true))

    // The results, read by a caller that registers nothing.
    const reader = makeRuntime(
      engineLayer("redis", scaleQueues.queue, { shards: scaleQueues.shards }),
      Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
    )
    const results = await reader
      .runPromise(Effect.forEach(ns, (n) => Scale.execute({ n }), { concurrency: 20 }))
      .finally(() => reader.dispose())
    expect(results).toEqual(ns.map(scaleResult))

    // One stored exit per (execution, activity, attempt), the activity's value; nothing left running or pending.
    for (const n of ns) {
      const fields = await c.hgetall(keyOf.get(n)!)
      expect(
        Object.keys(fields)
          .filter((f) => f.startsWith("a:"))
          .sort()
      ).toEqual(scaleSteps.map((s) => `a:${s}/1`))
      for (const s of scaleSteps)
        expect(JSON.parse(fields[`a:${s}/1`]!)).toMatchObject({ _tag: "Success", value: `${s}:${n}` })
      expect(fields.state).toBe("complete")
      expect(fields.task).toBeUndefined()
      expect(fields.wake).toBeUndefined()
      expect(
        Object.keys(fields)
          .filter((f) => f.startsWith("d:"))
          .sort()
      ).toEqual(["d:DurableClock/nap", "d:approval"])
    }

    // No orphan task: leftovers of the killed workers (recovered runs of complete executions) drain,
    // and then the control queues hold no task at all, none archived.
    const queued = () =>
      Promise.all(
        queues.flatMap((q) => [
          c.llen(queueKeys(q).pending),
          c.llen(queueKeys(q).active),
          c.zcard(queueKeys(q).scheduled),
          c.zcard(queueKeys(q).retry)
        ])
      )
    await waitFor("the control queues drained", queued, (xs) => xs.every((x) => x === 0), { timeoutMs: 30_000 })
    for (const q of queues) {
      expect(await c.zcard(queueKeys(q).archived)).toBe(0)
      expect(await c.keys(`${queueKeys(q).prefix}t:*`)).toEqual([])
    }

    // Each body ran once, and once more for each kill that caught it in flight; never otherwise.
    const ran = new Map<string, number>()
    const gens = new Map<string, Array<string>>()
    for (const entry of await c.lrange(scaleLogKey, 0, -1)) {
      const key = entry.slice(entry.indexOf(" ") + 1)
      ran.set(key, (ran.get(key) ?? 0) + 1)
      gens.set(key, [...(gens.get(key) ?? []), entry.slice(0, entry.indexOf(" "))])
    }
    const expected = new Map(
      ns.flatMap((n) => scaleSteps.map((s) => [`${n} ${s}`, 1 + (inFlightAtKills.get(`${n} ${s}`) ?? 0)] as const))
    )
    expect(ran.size).toBe(executions * scaleSteps.length)
    const off = [...expected]
      .filter(([k, v]) => ran.get(k) !== v)
      .map(([k, v]) => `${k}: ran ${ran.get(k) ?? 0} times (in workers ${gens.get(k)?.join(", ")}), expected ${v}`)
    expect(off).toEqual([])
    // The kills did land in the middle of things: activities in flight, durable sleeps pending.
    expect([...inFlightAtKills.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(sleepingAtKills).toBeGreaterThan(0)
  } finally {
    last.child.kill("SIGTERM")
    await last.exited
  }
}, 150_000)
