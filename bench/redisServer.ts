/**
 * The benchmark's own redis-server: started on a loopback port with no persistence (the tests'
 * startRedisServer), so the figures are not disturbed by (and do not disturb) any other Redis, and
 * INFO cpu / commandstats only count what the benchmark did. Stopped when the run ends.
 */
import { Redis } from "ioredis"
import { startRedisServer } from "../test/support/redis-server.js"

export interface BenchRedis {
  readonly port: number
  readonly url: string
  readonly version: string
  readonly stop: () => Promise<void>
}

/** Starts a private redis-server on 127.0.0.1 (a given port, or a free one). */
export const startBenchRedis = async (port?: number): Promise<BenchRedis> => {
  const server = await startRedisServer(["--protected-mode", "yes"], port)
  const c = new Redis(server.url, { maxRetriesPerRequest: 1 })
  try {
    const version = /redis_version:(\S+)/.exec(await c.info("server"))?.[1] ?? "unknown"
    return { port: server.port, url: server.url, version, stop: server.stop }
  } catch (e) {
    await server.stop()
    throw e
  } finally {
    c.disconnect()
  }
}
