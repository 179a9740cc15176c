/**
 * Gives the run a Redis before any test starts. With `REDIS_URL` set, the tests use that server
 * (and flush databases 1–15 of it); without it, they start a private redis-server on a free
 * loopback port for this run and stop it at the end, so a Redis that answers on 127.0.0.1:6379
 * (someone's development data) is never touched. Tests read the address with
 * `inject("redisUrl")` (see test/support/redis.ts).
 */
import type { TestProject } from "vitest/node"
import { type RedisServerHandle, startRedisServer } from "./redis-server.js"

let server: RedisServerHandle | undefined

export default async function setup(project: TestProject) {
  let url = process.env.REDIS_URL
  if (url === undefined || url === "") {
    server = await startRedisServer()
    url = server.url
    console.log(`[effect-asynq tests] a private redis-server at ${url} (set REDIS_URL to use another server)`)
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
