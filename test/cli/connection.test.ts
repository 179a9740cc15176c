/**
 * Where the CLI connects: --redis-cluster and --redis-sentinel (with --redis-sentinel-name) on
 * every command, and for the worker the handlers module's `options.redis` (flags win, then
 * options.redis, then REDIS_URL). Real processes against a real Redis and a real Redis Cluster.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Redis as IORedis } from "ioredis"
import { createClient } from "../../src/client.js"
import { asynqMsg, putPending } from "../support/asynqLayout.js"
import { cliBundle } from "../support/cliBundle.js"
import { type RedisClusterHandle, startRedisCluster } from "../support/cluster.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { runCli } from "./runCli.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
/** Nothing listens there: a connection to it is refused at once. */
const deadRedisUrl = "redis://127.0.0.1:1"
let c: IORedis
let dir: string

/** A handlers module that appends each task id it runs to `seen-<name>` (a file, so no Redis is involved in telling). */
const writeHandlers = (name: string, options: string) => {
  const file = join(dir, `${name}.mjs`)
  writeFileSync(
    file,
    `import { appendFileSync } from "node:fs"
export const handlers = { "conn:": async (task) => { appendFileSync(${JSON.stringify(join(dir, `seen-${name}`))}, task.id + "\\n") } }
export const options = ${options}
`
  )
  return file
}
const seen = (name: string): Array<string> => {
  const f = join(dir, `seen-${name}`)
  return existsSync(f)
    ? readFileSync(f, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : []
}

const startWorker = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, [await cliBundle(), "worker", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let logs = ""
  child.stdout.on("data", (d) => (logs += d))
  child.stderr.on("data", (d) => (logs += d))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, exited, logs: () => logs }
}
const stop = async (w: { child: ChildProcess; exited: Promise<number | null> }) => {
  w.child.kill("SIGTERM")
  return w.exited
}

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  mkdirSync(join(root, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(root, ".tmp", "cli-connection-"))
})
afterAll(() => {
  c.disconnect()
  rmSync(dir, { recursive: true, force: true })
})

describe("CLI connection flags", { timeout: 120_000 }, () => {
  it("bad or clashing connection flags are usage errors (exit 2), before connecting", async () => {
    const bad = await runCli(["queue", "ls", "--redis-cluster", "127.0.0.1"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe(
      'effect-asynq: --redis-cluster expects host:port,host:port,… with ports 1 to 65535; got "127.0.0.1"\n'
    )
    const both = await runCli([
      "stats",
      "--redis-cluster",
      "127.0.0.1:7000",
      "--redis-sentinel",
      "127.0.0.1:26379",
      "--redis-sentinel-name",
      "m"
    ])
    expect(both.code).toBe(2)
    expect(both.stderr).toBe("effect-asynq: --redis-cluster and --redis-sentinel cannot be used together\n")
    const noName = await runCli(["worker", "x.mjs", "--redis-sentinel", "127.0.0.1:26379"])
    expect(noName.code).toBe(2)
    expect(noName.stderr).toContain("--redis-sentinel needs --redis-sentinel-name")
    const badEnv = await runCli(["worker", "x.mjs"], { REDIS_URL: "redis//bad:host" })
    expect(badEnv.code).toBe(2)
    expect(badEnv.stderr).toBe(
      'effect-asynq: $REDIS_URL expects redis://[user:pass@]host:port[/db], rediss://… (TLS) or host:port[/db]; got "redis//bad:host" (not a redis:// or rediss:// URL, nor host:port)\n'
    )
    const nameOnly = await runCli(["queue", "ls", "--redis-sentinel-name", "mymaster"])
    expect(nameOnly.code).toBe(2)
    expect(nameOnly.stderr).toContain("--redis-sentinel-name needs --redis-sentinel")
  })

  it("a Sentinel with nobody listening fails like any unreachable Redis (exit 1), naming the sentinel", async () => {
    const r = await runCli(["queue", "ls", "--redis-sentinel", "127.0.0.1:1", "--redis-sentinel-name", "mymaster"])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("sentinel mymaster@127.0.0.1:1")
  })

  it("worker: the module's options.redis is used when no flag names a Redis, even with REDIS_URL set elsewhere", async () => {
    const module = writeHandlers(
      "module-redis",
      `{ redis: ${JSON.stringify(testRedisUrl())}, shutdownTimeoutMs: 2000 }`
    )
    const w = await startWorker([module, "--queues", "modq=1"], { REDIS_URL: deadRedisUrl })
    await putPending(c, asynqMsg("modq", "m1", { type: "conn:one" }), Date.now())
    await waitFor(
      "the worker to run m1 on the module's Redis",
      () => seen("module-redis"),
      (ids) => ids.includes("m1"),
      { timeoutMs: 60_000 }
    )
    expect(await stop(w)).toBe(0)
  })

  it("worker: --redis-url wins over the module's options.redis", async () => {
    const module = writeHandlers("flag-wins", `{ redis: ${JSON.stringify(deadRedisUrl)}, shutdownTimeoutMs: 2000 }`)
    const w = await startWorker([module, "--queues", "flagq=1", "--redis-url", testRedisUrl()], {
      REDIS_URL: deadRedisUrl
    })
    await putPending(c, asynqMsg("flagq", "f1", { type: "conn:one" }), Date.now())
    await waitFor(
      "the worker to run f1 on the flag's Redis",
      () => seen("flag-wins"),
      (ids) => ids.includes("f1"),
      { timeoutMs: 60_000 }
    )
    expect(await stop(w)).toBe(0)
  })

  describe("against a real Redis Cluster", () => {
    let cluster: RedisClusterHandle
    beforeAll(async () => {
      cluster = await startRedisCluster()
    }, 60_000)
    afterAll(() => cluster?.stop())

    it("worker --redis-cluster processes a task enqueued on the cluster; queue ls --redis-cluster lists its queue", async () => {
      const seeds = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",")
      const client = createClient({ cluster: cluster.nodes })
      try {
        const info = await client.enqueue("conn:cluster", { n: 1 }, { queue: "clusterq" })
        const ls = await runCli(["queue", "ls", "--redis-cluster", seeds], { REDIS_URL: deadRedisUrl })
        expect(ls.code).toBe(0)
        expect(ls.stdout).toBe("clusterq\n")
        const module = writeHandlers("cluster", "{ shutdownTimeoutMs: 2000 }")
        const w = await startWorker([module, "--queues", "clusterq=1", "--redis-cluster", seeds], {
          REDIS_URL: deadRedisUrl
        })
        await waitFor(
          "the worker to run the task on the cluster",
          () => seen("cluster"),
          (ids) => ids.includes(info.id),
          { timeoutMs: 60_000 }
        )
        expect(await stop(w)).toBe(0)
        const stats = JSON.parse(
          (await runCli(["queue", "inspect", "clusterq", "--json", "--redis-cluster", seeds])).stdout
        ) as { processed: number; size: number }
        expect(stats).toMatchObject({ processed: 1, size: 0 })
      } finally {
        await client.close()
      }
    })
  })
})
