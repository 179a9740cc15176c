/**
 * A worker process killed (SIGKILL) in the middle of an activity, after its side effect and before
 * its exit is stored; a new worker process takes over. Every execution completes with the right
 * result; the killed activity's side effect ran twice (at-least-once) and every other one once; one
 * exit is recorded per (execution, activity, attempt).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import type { WorkflowEngine } from "effect/workflow"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, expect, it } from "vitest"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import { controlQueueOf } from "../../src/workflow/index.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { Crash } from "./fixtures/crashWorkflow.js"
import { engineLayer, makeRuntime } from "./support.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
let c: IORedis
const children: Array<ChildProcess> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  c.disconnect()
})

const spawnWorker = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--import", "tsx", "test/workflow/fixtures/crashWorker.ts"], {
    cwd: root,
    env: { ...process.env, REDIS_URL: testRedisUrl(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  children.push(child)
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code))
  )
  return { child, exited, output: () => out }
}

it("a worker SIGKILLed between an activity's side effect and its stored exit: a new worker completes every execution", async () => {
  const ns = [1, 2, 3, 4, 5]
  // Started from a process that registers nothing (it only starts executions).
  const client = makeRuntime(
    engineLayer("redis", "crash"),
    Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
  )
  const ids = await client.runPromise(Effect.forEach(ns, (n) => Crash.execute({ n }, { discard: true })))
  await client.dispose()
  const a = spawnWorker({ KILL_AT: "b" })
  expect(await a.exited).toBe("SIGKILL")
  // The worker that takes over holds its own leases longer: a test machine too busy to extend a
  // 1 s lease in time would hand its runs on again, and an activity would run twice for that (the
  // at-least-once the docs state), not for the kill this test is about.
  const b = spawnWorker({ LEASE_MS: "15000" })
  try {
    const states = () =>
      Promise.all(
        ids.map((id) =>
          c.hget(workflowExecutionKey(controlQueueOf({ queue: "crash", shards: 1 }, "Wf.Crash", id), id), "state")
        )
      )
    await waitFor("every execution complete", states, (s) => s.every((x) => x === "complete"), {
      timeoutMs: 20_000
    }).catch((e) => {
      throw new Error(`${e}\nworker output:\n${b.output()}`)
    })
    // The results, read by a caller that registers nothing.
    const reader = makeRuntime(
      engineLayer("redis", "crash"),
      Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>
    )
    const results = await reader
      .runPromise(Effect.forEach(ns, (n) => Crash.execute({ n })))
      .finally(() => reader.dispose())
    expect(results).toEqual(ns.map((n) => `a${n}-b${n}-c${n}`))
    // Side effects: the killed activity ran twice (at-least-once), every other one once.
    const side = async (name: string) =>
      Promise.all(ns.map(async (n) => Number(await c.get(`test:wf:side:${name}:${n}`))))
    const [sa, sb, sc] = await Promise.all([side("a"), side("b"), side("c")])
    expect(sa).toEqual([1, 1, 1, 1, 1])
    expect(sc).toEqual([1, 1, 1, 1, 1])
    expect(sb.filter((x) => x === 2)).toHaveLength(1)
    expect(sb.filter((x) => x === 1)).toHaveLength(4)
    // One recorded exit per (execution, activity, attempt): exactly-once recording.
    for (const id of ids) {
      const fields = Object.keys(
        await c.hgetall(workflowExecutionKey(controlQueueOf({ queue: "crash", shards: 1 }, "Wf.Crash", id), id))
      )
      expect(fields.filter((f) => f.startsWith("a:")).sort()).toEqual(["a:a/1", "a:b/1", "a:c/1"])
    }
  } finally {
    b.child.kill("SIGTERM")
    await b.exited
  }
}, 40_000)
