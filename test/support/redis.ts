/**
 * Per-file Redis isolation: each test file gets its own logical database (chosen from the
 * vitest worker id, so files running at the same time never share one), flushed when the file
 * starts. asynq's global keys (asynq:queues, asynq:servers, …) are then private to the file.
 */
import { inject } from "vitest"
import { Redis as IORedis } from "ioredis"
import { Effect, Exit, Layer, Scope } from "effect"
import * as Context from "effect/Context"
import { Broker } from "../../src/broker/Broker.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { Redis } from "../../src/redis/Redis.js"

export const baseRedisUrl = (): string => inject("redisUrl")

/** The database of this test worker (1..15; 0 is left to people's own data). */
export const testDb = (): number => {
  const id = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? "1")
  return ((id - 1) % 15) + 1
}

export const testRedisUrl = (): string => {
  const u = new URL(baseRedisUrl())
  u.pathname = `/${testDb()}`
  return u.toString()
}

/** A raw ioredis connection to this file's database (for arranging and checking state). */
export const rawClient = (): IORedis => {
  const c = new IORedis(testRedisUrl(), { maxRetriesPerRequest: 1 })
  c.on("error", () => {})
  return c
}

export const flushTestDb = async (): Promise<void> => {
  const c = rawClient()
  try {
    await c.flushdb()
  } finally {
    c.disconnect()
  }
}

/** The Redis service Layer on this file's database. */
export const testRedisLayer = (): Layer.Layer<Redis, unknown> => Redis.layer({ url: testRedisUrl() })

/** Runs an Effect needing Redis against this file's database (a fresh connection, closed after). */
export const runWithRedis = <A, E>(eff: Effect.Effect<A, E, Redis>): Promise<A> =>
  Effect.runPromise(eff.pipe(Effect.provide(testRedisLayer())) as Effect.Effect<A, unknown>)

/** Opens Broker + Redis (ioredis, as a worker has them) with `options`; closed with the returned `close`. */
export const openBroker = async (options: RedisOptions) => {
  const scope = await Effect.runPromise(Scope.make())
  const context = (await Effect.runPromise(
    Layer.buildWithScope(Broker.layer.pipe(Layer.provideMerge(Redis.layer(options))), scope)
  )) as Context.Context<Broker>
  return { broker: Context.get(context, Broker), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
