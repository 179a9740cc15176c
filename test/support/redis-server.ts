/**
 * Starting private redis-server processes on free loopback ports, for the test harness (when no
 * Redis answers) and for tests that need their own server (Redis Cluster, killing a server).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis } from "ioredis"
import { waitFor } from "./waitFor.js"

/** Whether a Redis answers PING at `url` (within about 2 s; never throws). */
export const redisAnswers = async (url: string): Promise<boolean> => {
  const c = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000
  })
  c.on("error", () => {})
  try {
    await c.connect()
    await c.ping()
    return true
  } catch {
    return false
  } finally {
    c.disconnect()
  }
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.unref()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address()
      s.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))))
    })
  })

export const redisServerBinary = (): string => {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error(
      "redis-server is not installed and no Redis answers at REDIS_URL: install Redis (Debian: `apt-get install redis-server`) or set REDIS_URL to a running server."
    )
  }
}

export const waitForPing = async (port: number, timeoutMs = 10_000, proc?: ChildProcess): Promise<void> => {
  const status = await waitFor(
    `redis-server on port ${port} to answer PING`,
    async () =>
      proc && proc.exitCode !== null ? "exited" : (await redisAnswers(`redis://127.0.0.1:${port}`)) ? "up" : "not yet",
    (s) => s !== "not yet",
    { timeoutMs }
  )
  if (status === "exited") throw new Error(`redis-server on port ${port} exited at start with code ${proc!.exitCode}`)
}

export interface RedisServerHandle {
  readonly port: number
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

/**
 * Starts `redis-server` on a loopback port (`port`, or a free one) with no persistence, in a
 * temporary directory; `extra` adds arguments. `stop()` kills it (SIGKILL: nothing is kept, so
 * nothing needs flushing) and removes the directory. The one way the tests, the benchmark and the
 * `npm start` demo start a private Redis.
 */
export const startRedisServer = async (
  extra: ReadonlyArray<string> = [],
  port?: number
): Promise<RedisServerHandle> => {
  const bin = redisServerBinary()
  const p = port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), "effect-asynq-redis-"))
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  const proc = spawn(
    bin,
    ["--port", String(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extra],
    {
      stdio: "ignore"
    }
  )
  try {
    await waitForPing(p, 10_000, proc)
  } catch (e) {
    proc.kill("SIGKILL")
    cleanup()
    throw e
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        cleanup()
        return resolve()
      }
      proc.once("exit", () => {
        cleanup()
        resolve()
      })
      proc.kill("SIGKILL")
    })
  return { port: p, url: `redis://127.0.0.1:${p}`, process: proc, stop }
}
