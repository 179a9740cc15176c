/**
 * The benchmark's own redis-server: started on a free loopback port with no persistence, so the
 * figures are not disturbed by (and do not disturb) any other Redis, and INFO cpu / commandstats
 * only count what the benchmark did. Stopped (SIGTERM, then SIGKILL) when the run ends.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis } from "ioredis"

export interface BenchRedis {
  readonly port: number
  readonly url: string
  readonly version: string
  readonly stop: () => Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.unref()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address()
      s.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no free port"))))
    })
  })

const binary = (): string => {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error("bench: redis-server is not installed (Debian: apt-get install redis-server)")
  }
}

const waitForPing = async (port: number, proc: ChildProcess, timeoutMs = 10_000): Promise<string> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`bench: redis-server exited with code ${proc.exitCode}`)
    const c = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    c.on("error", () => {})
    try {
      await c.connect()
      const info = await c.info("server")
      c.disconnect()
      return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown"
    } catch {
      c.disconnect()
      if (Date.now() > deadline) throw new Error(`bench: redis-server on port ${port} did not answer within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

/** Starts a private redis-server on 127.0.0.1 (a given port, or a free one). */
export const startBenchRedis = async (port?: number): Promise<BenchRedis> => {
  const p = port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), "effect-asynq-bench-"))
  const proc = spawn(
    binary(),
    ["--port", String(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "yes"],
    { stdio: "ignore" }
  )
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  let version: string
  try {
    version = await waitForPing(p, proc)
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
      const kill = setTimeout(() => proc.kill("SIGKILL"), 2_000)
      proc.once("exit", () => {
        clearTimeout(kill)
        cleanup()
        resolve()
      })
      proc.kill("SIGTERM")
    })
  return { port: p, url: `redis://127.0.0.1:${p}`, version, stop }
}
