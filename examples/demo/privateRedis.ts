/**
 * For the demo: use REDIS_URL (default redis://127.0.0.1:6379) if a Redis answers there, else start
 * a private redis-server on a free loopback port (the same helper the tests and the benchmark
 * use), stopped when the demo ends or the process exits.
 */
import { redisAnswers, startRedisServer } from "../../test/support/redis-server.js"

export interface DemoRedis {
  readonly url: string
  readonly started: boolean
  readonly stop: () => Promise<void>
}

export const demoRedis = async (): Promise<DemoRedis> => {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
  if (await redisAnswers(url)) return { url, started: false, stop: async () => {} }
  const server = await startRedisServer()
  process.once("exit", () => server.process.kill("SIGKILL"))
  return { url: server.url, started: true, stop: server.stop }
}
