import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Broker } from "../../src/broker/Broker.js"
import { type IdleSockets, idleSockets } from "../../src/redis/idleSockets.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { makeRedis, type Redis, type RedisClient } from "../../src/redis/Redis.js"
import { RedisService } from "../../src/redis/RedisService.js"
import { RedisConnectionError } from "../../src/redis/errors.js"
import { makeRedisService } from "../../src/redis/ioredisService.js"
import { lightRedisLayer } from "../../src/redis/lightRedis.js"
import { bundledIoredis } from "../../src/redis/loadIoredis.js"
import { brokerLayer as facadeBrokerLayer, makePromiseRuntime } from "../../src/runtime/promiseRuntime.js"

/**
 * The services of one function container, built on the first invocation and reused by the warm
 * ones after it (one Redis connection per container), on the facades' shared Promise runtime.
 * Between invocations the connection's socket is unref'd (also a socket ioredis reconnects while
 * idle), so it never keeps the Node.js event loop alive after a handler returns; while an
 * invocation runs it is ref'd again. A connection closed for good is replaced on the next run.
 */
export interface WarmRuntime<R> {
  /**
   * Runs one invocation's program with the container's services. Rejects with the program's error.
   * With `budgetMs` (the invocation's remaining time less a reserve) opening the connection and the
   * program together get that long: past it the program is interrupted and `run` rejects with an
   * InvocationTimeout, so a stalled Redis ends the invocation with a clear error before the
   * platform kills it.
   */
  readonly run: <A, E>(
    program: Effect.Effect<A, E, R>,
    options?: { readonly budgetMs?: number | undefined }
  ) => Promise<A>
  /** Closes the connection (QUIT). The next `run` connects again. */
  readonly dispose: () => Promise<void>
}

/** An invocation's time ran out while connecting to Redis or while its program ran. */
export class InvocationTimeout extends Data.TaggedError("InvocationTimeout")<{
  /** What was under way: opening the Redis connection, or the program itself. */
  readonly phase: "connect" | "run"
  readonly budgetMs: number
  readonly message: string
}> {}

/** A warm runtime over any Layer that contains Redis (e.g. Broker + Redis + your services). */
export const makeWarmRuntime = <R, E>(layer: Layer.Layer<R | Redis, E>): WarmRuntime<R | Redis> => {
  type S = R | Redis
  let inFlight = 0
  const socketsOf = new WeakMap<Context.Context<S>, IdleSockets>()
  const idle = (context: Context.Context<S>) => socketsOf.get(context)!
  const runtime = makePromiseRuntime(layer, {
    onOpen: (context) =>
      socketsOf.set(
        context,
        idleSockets(Context.get(context as Context.Context<RedisService>, RedisService), () => inFlight === 0)
      ),
    isUsable: (context) => !idle(context).ended()
  })

  return {
    run: async (program, options) => {
      inFlight++
      let sockets: IdleSockets | undefined
      const budgetMs = options?.budgetMs
      let timer: ReturnType<typeof setTimeout> | undefined
      let phase: "connect" | "run" = "connect"
      const controller = new AbortController()
      const expired =
        budgetMs === undefined
          ? undefined
          : new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => {
                  controller.abort()
                  reject(
                    new InvocationTimeout({
                      phase,
                      budgetMs,
                      message:
                        phase === "connect"
                          ? `Redis did not answer within the invocation's remaining time (${Math.round(budgetMs)} ms) while connecting`
                          : `the invocation's remaining time (${Math.round(budgetMs)} ms) ran out while it was waiting for Redis`
                    })
                  )
                },
                Math.max(0, budgetMs)
              )
            })
      expired?.catch(() => undefined) // reported through the race below, never as an unhandled rejection
      const bounded = <A>(p: Promise<A>): Promise<A> => (expired === undefined ? p : Promise.race([p, expired]))
      try {
        const { context } = await bounded(runtime.open())
        phase = "run"
        sockets = idle(context)
        sockets.hold(true)
        return await bounded(Effect.runPromiseWith(context)(program, { signal: controller.signal }))
      } finally {
        if (timer !== undefined) clearTimeout(timer)
        inFlight--
        if (sockets && inFlight === 0) sockets.hold(false)
      }
    },
    dispose: runtime.reset
  }
}

/**
 * Where a handler's Redis comes from: connection options (the usual), an open ioredis client the
 * application owns (it is used as is and never closed by the handler), or a Layer providing the
 * Redis service (e.g. `Redis.layer(...)` with your own settings).
 */
export type RedisSource = RedisOptions | RedisClient | Layer.Layer<Redis, unknown>

/** The command timeout the serverless handlers use unless `commandTimeoutMs` is given. */
export const serverlessCommandTimeoutMs = 2000

const isClient = (source: RedisSource): source is RedisClient =>
  typeof (source as { readonly sendCommand?: unknown }).sendCommand === "function"

/**
 * Broker over a Redis Layer or an application's open client (used as is, never closed here);
 * undefined for connection options, which each caller opens with its own defaults.
 */
export const brokerLayerOfLayerOrClient = (
  source: RedisSource | string | undefined
): Layer.Layer<Broker | Redis, unknown> | undefined => {
  if (source === undefined || typeof source === "string") return undefined
  if (Layer.isLayer(source)) return Broker.layer.pipe(Layer.provideMerge(source as Layer.Layer<Redis, unknown>))
  if (isClient(source))
    return Broker.layer.pipe(
      Layer.provideMerge(
        Layer.effect(
          RedisService,
          Effect.map(bundledIoredis(), (io) => makeRedis(io, source, {}))
        )
      )
    ) as Layer.Layer<Broker | Redis, unknown>
  return undefined
}

/**
 * The usual container: Broker over one Redis connection (`source`: options, else REDIS_URL, else
 * redis://127.0.0.1:6379; or a client or Redis Layer). Options get the serverless command timeout
 * (2000 ms) unless they set their own.
 */
export const brokerLayer = (source?: RedisSource): Layer.Layer<Broker | Redis, unknown> => {
  const given = brokerLayerOfLayerOrClient(source)
  if (given !== undefined) return given
  const options = source as RedisOptions | undefined
  return facadeBrokerLayer({ ...options, commandTimeoutMs: options?.commandTimeoutMs ?? serverlessCommandTimeoutMs })
}

/**
 * The enqueue handler's container: like `brokerLayer`, but connection options (a single node) are
 * served by the light transport (src/redis/lightRedis.ts: RESP over node:net/node:tls, no ioredis),
 * so a bundle of the enqueue handler carries no ioredis. An application's ioredis client is wrapped
 * as is; Redis Cluster and Sentinel are given as a Layer (`Redis.layer({ cluster })`), which brings
 * ioredis with it.
 */
export const lightBrokerLayer = (source?: RedisSource): Layer.Layer<Broker | Redis, unknown> => {
  if (source !== undefined && Layer.isLayer(source))
    return Broker.layer.pipe(Layer.provideMerge(source as Layer.Layer<Redis, unknown>))
  if (source !== undefined && isClient(source))
    return Broker.layer.pipe(
      Layer.provideMerge(
        Layer.sync(RedisService, () =>
          makeRedisService(
            source,
            {},
            Effect.fail(
              new RedisConnectionError({
                target: "(application's client)",
                message: "the enqueue handler opens no second connection"
              })
            )
          )
        )
      )
    ) as Layer.Layer<Broker | Redis, unknown>
  const given = source as RedisOptions | undefined
  const options: RedisOptions = {
    ...given,
    url: given?.url ?? (process.env.REDIS_URL || "redis://127.0.0.1:6379"),
    commandTimeoutMs: given?.commandTimeoutMs ?? serverlessCommandTimeoutMs
  }
  return Broker.layer.pipe(Layer.provideMerge(lightRedisLayer(options)))
}

/** A warm runtime providing the Broker over one Redis connection per container (`redis`: options, default `REDIS_URL`, an open ioredis client, or a Layer). */
export const makeBrokerRuntime = (source?: RedisSource): WarmRuntime<Broker | Redis> =>
  makeWarmRuntime(brokerLayer(source))

/**
 * The budget of an invocation with `remainingMs` left: that, less a reserve to answer in (a
 * quarter of it, at most `reserveMs`, default 1000 ms).
 */
export const invocationBudget = (remainingMs: number, reserveMs = 1000): number =>
  Math.max(0, remainingMs - Math.min(reserveMs, remainingMs / 4))
