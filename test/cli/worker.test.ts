import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Redis as IORedis } from "ioredis"
import { asynqMsg, putPending } from "../support/asynqLayout.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runCli } from "./runCli.js"
import { cliBundle } from "../support/cliBundle.js"
import { waitFor } from "../support/waitFor.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
let c: IORedis
let dir: string

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  // Inside the repository (.tmp/ is git-ignored) so the module can import the project's ioredis.
  mkdirSync(join(root, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(root, ".tmp", "cli-worker-"))
  // The handler records what it saw in Redis, so the test can tell the task really ran.
  writeFileSync(
    join(dir, "handlers.mjs"),
    `import { Redis } from "ioredis"
const r = new Redis(${JSON.stringify(testRedisUrl())})
r.on("error", () => {})
export const handlers = { "email:send": async (task) => { await r.rpush("seen", task.id) } }
export const options = { shutdownTimeoutMs: 2000 }
`
  )
  writeFileSync(join(dir, "bad.mjs"), "export const nothing = 1\n")
  writeFileSync(join(dir, "throws.mjs"), 'throw new Error("config file missing")\n')
  // A module that takes a while to load (its top level waits until a marker file appears).
  writeFileSync(
    join(dir, "slow.mjs"),
    `import { existsSync, writeFileSync } from "node:fs"
writeFileSync(${JSON.stringify(join(dir, "slow-loading"))}, "")
while (!existsSync(${JSON.stringify(join(dir, "slow-go"))})) await new Promise((r) => setTimeout(r, 20))
export const handlers = { "never:": async () => {} }
`
  )
})
afterAll(() => {
  c.disconnect()
  rmSync(dir, { recursive: true, force: true })
})

describe("CLI worker", { timeout: 120_000 }, () => {
  it("processes tasks with the module's handlers, shows up in server ls, stops gracefully on SIGTERM (exit 0)", async () => {
    const child = spawn(
      process.execPath,
      [await cliBundle(), "worker", join(dir, "handlers.mjs"), "--queues", "default=1", "--concurrency", "2"],
      {
        cwd: root,
        env: { ...process.env, REDIS_URL: testRedisUrl() },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let logs = ""
    child.stdout.on("data", (d) => (logs += d))
    child.stderr.on("data", (d) => (logs += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))

    await putPending(c, asynqMsg("default", "w1"), Date.now())
    await waitFor(
      "the handler to run task w1",
      () => c.lrange("seen", 0, -1),
      (seen) => seen.includes("w1"),
      { timeoutMs: 60_000 }
    )
    await waitFor(
      "the task to be counted as processed",
      () => c.get("asynq:{default}:processed"),
      (n) => n === "1",
      { timeoutMs: 60_000 }
    )
    expect(await c.exists("asynq:{default}:t:w1")).toBe(0)

    const servers = JSON.parse(
      (await runCli(["server", "ls", "--json"], { REDIS_URL: testRedisUrl() })).stdout
    ) as Array<{ pid: number; concurrency: number; queues: Record<string, number> }>
    expect(servers.find((s) => s.pid === child.pid)).toMatchObject({ concurrency: 2, queues: { default: 1 } })

    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(logs).toContain("SIGTERM received: shutting down gracefully")
    expect(await c.zcard("asynq:servers")).toBe(0)
  })

  it("SIGTERM while the handlers module is still loading: the worker is not started, exit 0", async () => {
    const child = spawn(process.execPath, [await cliBundle(), "worker", join(dir, "slow.mjs"), "--queues", "slowq=1"], {
      cwd: root,
      env: { ...process.env, REDIS_URL: testRedisUrl() },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let logs = ""
    child.stdout.on("data", (d) => (logs += d))
    child.stderr.on("data", (d) => (logs += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    await waitFor("the module to start loading", () => existsSync(join(dir, "slow-loading")), Boolean, {
      timeoutMs: 60_000
    })
    child.kill("SIGTERM")
    // The child shows nothing when the signal lands (it reports it only once the load finishes), so
    // there is no condition to wait on: a short pause for the signal to be delivered and handled
    // before the module load is let through.
    await new Promise((r) => setTimeout(r, 200))
    writeFileSync(join(dir, "slow-go"), "")
    expect(await exited).toBe(0)
    expect(logs).toContain("SIGTERM received before the worker started: not starting it")
    expect(await c.zcard("asynq:servers")).toBe(0)
  })

  it("a module without handlers: exit 1, one line naming the module and the reason", async () => {
    const path = join(dir, "bad.mjs")
    const r = await runCli(["worker", path], { REDIS_URL: testRedisUrl() })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      `effect-asynq: cannot load the handlers module ${path}: ${path} must export its handlers as "handlers" or "default": a ServeMux, a record of pattern -> function, or a function\n`
    )
  })

  it("a module that throws while loading, or does not exist: exit 1, one line with the path and the error (no log line)", async () => {
    const throws = join(dir, "throws.mjs")
    const r = await runCli(["worker", throws], { REDIS_URL: testRedisUrl() })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(`effect-asynq: cannot load the handlers module ${throws}: config file missing\n`)
    const missing = join(dir, "no-such-module.mjs")
    const m = await runCli(["worker", missing], { REDIS_URL: testRedisUrl() })
    expect(m.code).toBe(1)
    expect(m.stderr).toBe(`effect-asynq: cannot load the handlers module ${missing}: Cannot find module '${missing}'\n`)
  })

  it("a missing module argument is a usage error: exit 2", async () => {
    const r = await runCli(["worker"])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("effect-asynq: Missing required argument: handlers-module (see effect-asynq worker --help)\n")
  })
})
