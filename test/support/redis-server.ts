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

export const waitForPing = async (port: number, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const c = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    c.on("error", () => {})
    try {
      await c.connect()
      await c.ping()
      c.disconnect()
      return
    } catch {
      c.disconnect()
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

export interface RedisServerHandle {
  readonly port: number
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

/** Starts `redis-server` on a free loopback port with no persistence; `extra` adds arguments. */
export const startRedisServer = async (extra: ReadonlyArray<string> = []): Promise<RedisServerHandle> => {
  const bin = redisServerBinary()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), "effect-asynq-redis-"))
  const proc = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extra], {
    stdio: "ignore"
  })
  await waitForPing(port)
  const stop = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        rmSync(dir, { recursive: true, force: true })
        return resolve()
      }
      proc.once("exit", () => {
        rmSync(dir, { recursive: true, force: true })
        resolve()
      })
      proc.kill("SIGKILL")
    })
  return { port, url: `redis://127.0.0.1:${port}`, process: proc, stop }
}
