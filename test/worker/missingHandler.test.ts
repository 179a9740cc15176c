/**
 * Issue 29, point 8: a worker process at its default log level says so when it has no handler for
 * a task type, once per type and queue (not once per task), naming both and what happens to the
 * tasks. A real `effect-asynq worker` child process (adapters/cli/main.ts worker) on a real Redis.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { enqueueMany } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { runBroker } from "../processor/support.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const c = rawClient()
beforeAll(flushTestDb)
afterAll(() => void c.disconnect())

describe("worker with no handler for a task type (default log level)", () => {
  it("20 tasks of an unhandled type retried over and over: one warning naming the type, the queue and the retry", async () => {
    const k = queueKeys("orphans")
    await runBroker(
      enqueueMany(
        Array.from({ length: 20 }, (_, i) => ({ type: "nobody:home", payload: { i }, options: { queue: "orphans" } }))
      )
    )
    // No --log-level: the worker's default. The fixture's handlers take "test:" types only; its retry delay is 0.
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "adapters/cli/main.ts",
        "worker",
        "test/worker/fixtures/recordingHandlers.ts",
        "--redis-url",
        testRedisUrl(),
        "--queues",
        "orphans=1"
      ],
      {
        cwd: root,
        env: { ...process.env, REDIS_URL: testRedisUrl() },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let out = ""
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
    try {
      // Every task fails at each attempt (each failure a retry, due at once): 60 failures is 3 attempts each.
      await waitFor(
        "60 failed attempts",
        async () => Number((await c.get(k.failedTotal)) ?? 0),
        (n) => n >= 60,
        { timeoutMs: 60_000 }
      )
      const warnings = out.split("\n").filter((l) => l.includes("no handler for task type"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("nobody:home")
      expect(warnings[0]).toContain("orphans")
      expect(warnings[0]).toContain("go to retry")
      expect(warnings[0]).toMatch(/level=WARN/i)
    } finally {
      child.kill("SIGKILL")
    }
  }, 90_000)
})
