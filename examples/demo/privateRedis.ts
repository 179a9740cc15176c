/** For the demo: use REDIS_URL if a Redis answers there, else start a private redis-server on a free port (stopped on exit). */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { Redis } from "ioredis"

const answers = async (url: string): Promise<boolean> => {
  const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1500 })
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

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no free port"))))
    })
  })

export interface DemoRedis {
  readonly url: string
  readonly started: boolean
  readonly stop: () => Promise<void>
}

export const demoRedis = async (): Promise<DemoRedis> => {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
  if (await answers(url)) return { url, started: false, stop: async () => {} }
  const port = await freePort()
  let proc: ChildProcess
  try {
    proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
    await new Promise<void>((resolve, reject) => {
      proc.once("error", (e) => reject(new Error(`no Redis at ${url}, and redis-server could not be started (${e.message}); install Redis or set REDIS_URL`)))
      proc.once("spawn", () => resolve())
    })
  } catch (e) {
    throw e instanceof Error ? e : new Error(String(e))
  }
  const own = `redis://127.0.0.1:${port}`
  for (let i = 0; !(await answers(own)); i++) {
    if (i > 100) throw new Error(`the private redis-server on port ${port} did not answer`)
    await new Promise((r) => setTimeout(r, 50))
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null) return resolve()
      proc.once("exit", () => resolve())
      proc.kill("SIGTERM")
    })
  process.once("exit", () => proc.kill("SIGKILL"))
  return { url: own, started: true, stop }
}
