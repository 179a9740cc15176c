/**
 * Makes sure a Redis answers before any test runs: REDIS_URL (default redis://127.0.0.1:6379), or
 * else a private redis-server started on a free loopback port for this run. Tests read the
 * address with `inject("redisUrl")` (see test/support/redis.ts).
 */
import type { TestProject } from "vitest/node"
import { type RedisServerHandle, redisAnswers, startRedisServer } from "./redis-server.js"

let server: RedisServerHandle | undefined

export default async function setup(project: TestProject) {
  let url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
  if (!(await redisAnswers(url))) {
    server = await startRedisServer()
    url = server.url
    console.log(`[effect-asynq tests] no Redis at ${process.env.REDIS_URL ?? "redis://127.0.0.1:6379"}; started a private redis-server at ${url}`)
  }
  project.provide("redisUrl", url)
  return async () => {
    await server?.stop()
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string
  }
}
