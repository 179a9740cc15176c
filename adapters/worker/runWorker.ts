/**
 * The long-lived worker as a Promise API, for code that does not use Effect:
 *
 *   const worker = await runWorker({ redis: { url: process.env.REDIS_URL }, queues: { default: 1 },
 *     handlers: { "email:deliver": async (task, signal) => { ... } } })
 *   process.once("SIGTERM", () => void worker.shutdown())
 *
 * `shutdown()` is asynq's: stop fetching, wait up to shutdownTimeoutMs for running tasks, put the
 * rest back at the head of their queue, remove the server from asynq:servers, close Redis.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import type { LogLevel } from "effect/LogLevel"
import { Broker } from "../../src/broker/Broker.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import * as Server from "../../src/processor/Server.js"
import type { ServerIdentity } from "../../src/processor/serverState.js"
import { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { type LogFormat, loggingLayer } from "./logging.js"

export interface WorkerConfig extends ServerOptions {
  /** Redis connection (a URL or options); default REDIS_URL, then redis://127.0.0.1:6379. */
  readonly redis?: RedisOptions | string | undefined
  /** A ServeMux, a record of pattern → handler, or one handler for every task. */
  readonly handlers: HandlerInput
  readonly logFormat?: LogFormat
  readonly logLevel?: LogLevel
}

export interface WorkerHandle {
  readonly identity: ServerIdentity
  /** Stop taking new tasks (running ones go on). */
  readonly stop: () => Promise<void>
  /** Graceful shutdown, then the Redis connections close. Resolves to the number of tasks requeued unfinished. Idempotent. */
  readonly shutdown: () => Promise<number>
  /** Resolves when the worker has shut down. */
  readonly done: Promise<void>
  readonly activeCount: () => number
}

export const redisOptionsOf = (redis: RedisOptions | string | undefined): RedisOptions => {
  if (typeof redis === "string") return { url: redis }
  if (redis && (redis.url !== undefined || redis.cluster !== undefined || redis.sentinel !== undefined)) return redis
  return { ...redis, url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }
}

export const runWorker = async (config: WorkerConfig): Promise<WorkerHandle> => {
  const { redis, handlers, logFormat, logLevel, ...options } = config
  const logging = loggingLayer(logFormat, logLevel)
  const layer = Broker.layer.pipe(Layer.provideMerge(Redis.layer(redisOptionsOf(redis))), Layer.provideMerge(logging))
  const run = <A, E>(eff: Effect.Effect<A, E>) => Effect.runPromise(eff.pipe(Effect.provide(logging)))
  const scope = await run(Scope.make())
  try {
    const context = await run(Layer.buildWithScope(layer, scope))
    const handle = await run(Server.start(handlers, options).pipe(Scope.provide(scope), Effect.provideContext(context)))
    let closing: Promise<number> | undefined
    let resolveDone!: () => void
    const done = new Promise<void>((r) => (resolveDone = r))
    const shutdown = () =>
      (closing ??= run(
        handle.shutdown.pipe(
          Effect.provideContext(context),
          Effect.ensuring(Scope.close(scope, Exit.void)),
          Effect.ensuring(Effect.sync(resolveDone))
        )
      ))
    return { identity: handle.identity, stop: () => run(handle.stop), shutdown, done, activeCount: handle.activeCount }
  } catch (e) {
    await run(Scope.close(scope, Exit.void))
    throw e
  }
}
