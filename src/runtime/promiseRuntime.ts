/**
 * The runtime every Promise facade runs its effects on (createClient, createInspector,
 * createScheduler, runWorker and the serverless warm runtime): one Layer, built on the first call
 * and reused by later calls, with the Redis address resolved one way for all of them.
 *
 * - A failed build (say, no Redis at the address) is not remembered: the next call builds again.
 * - `reset()` closes what was built; the next call builds it again (a warm container's dispose).
 * - `close()` closes it for good: idempotent, and later calls reject with the facade's typed error.
 *   Nothing it built keeps the Node event loop alive after that.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as Context from "effect/Context"
import { Broker } from "../broker/Broker.js"
import type { RedisConnectionError } from "../redis/errors.js"
import { describeTarget, type RedisOptions } from "../redis/options.js"
import { openRedis, Redis } from "../redis/Redis.js"
import { RedisService } from "../redis/RedisService.js"
import { lightRedisLayer, lightRedisUnsupported } from "../redis/lightRedis.js"
import { type IoredisModule, runtimeIoredis } from "../redis/loadIoredis.js"

/** Where Redis is when no address is given and REDIS_URL is not set. */
export const defaultRedisUrl = "redis://127.0.0.1:6379"

/**
 * The Redis options a facade connects with: a URL string, or options naming `url`, `cluster` or
 * `sentinel`, win; else `process.env.REDIS_URL`; else redis://127.0.0.1:6379. Other options
 * (credentials, timeouts, TLS) are kept either way.
 */
export const resolveRedisOptions = (options?: RedisOptions | string): RedisOptions => {
  if (typeof options === "string") return { url: options }
  if (
    options !== undefined &&
    (options.url !== undefined || options.cluster !== undefined || options.sentinel !== undefined)
  )
    return options
  return { ...options, url: process.env.REDIS_URL || defaultRedisUrl }
}

/** The services of a Promise facade: Broker over one Redis connection (Redis kept in the output). */
export const brokerLayer = (options?: RedisOptions | string): Layer.Layer<Broker | Redis, RedisConnectionError> =>
  Broker.layer.pipe(Layer.provideMerge(Redis.layer(resolveRedisOptions(options))))

/**
 * Whether the Promise client (createClient) speaks to these options over the light transport
 * (src/redis/lightRedis.ts: its own RESP over one socket, a quarter fewer instructions per enqueue
 * than ioredis's command path): a single node at a redis:// or rediss:// URL. Cluster, Sentinel, an
 * address ioredis alone reads (host:port, a unix socket path) and `maxRetriesPerRequest` (a retry
 * policy of ioredis's) keep ioredis.
 */
export const clientUsesLightTransport = (options: RedisOptions): boolean =>
  options.maxRetriesPerRequest === undefined && lightRedisUnsupported(options) === undefined

/**
 * The Promise client's services: Broker over the light transport when the options allow it
 * (clientUsesLightTransport), else over ioredis, imported only then and at run time
 * (loadIoredis.ts `runtimeIoredis`; `ioredis`, when given, is used instead), so that neither a
 * bundle of the client nor a process on a single node loads ioredis.
 */
export const clientBrokerLayer = (
  options?: RedisOptions | string,
  ioredis?: IoredisModule
): Layer.Layer<Broker | Redis, RedisConnectionError> => {
  const resolved = resolveRedisOptions(options)
  if (clientUsesLightTransport(resolved)) return Broker.layer.pipe(Layer.provideMerge(lightRedisLayer(resolved)))
  const overIoredis = Layer.effect(
    RedisService,
    Effect.flatMap(runtimeIoredis(describeTarget(resolved), ioredis), (io) => openRedis(io, resolved))
  )
  return Broker.layer.pipe(Layer.provideMerge(overIoredis as Layer.Layer<Redis, RedisConnectionError>))
}

/** A call on a runtime after its `close()` (the facades pass their own error, e.g. ClientClosed). */
export class RuntimeClosed extends Data.TaggedError("RuntimeClosed")<{ readonly message: string }> {}

export interface PromiseRuntimeOptions<R> {
  /** What a call after `close()` rejects with. Default: a RuntimeClosed. */
  readonly closedError?: (() => unknown) | undefined
  /** Wraps every effect the runtime runs (the build, each call, the close), e.g. to provide a logger. */
  readonly wrap?: (<A, E, X>(effect: Effect.Effect<A, E, X>) => Effect.Effect<A, E, X>) | undefined
  /** Called once with each newly built context. */
  readonly onOpen?: ((context: Context.Context<R>) => void) | undefined
  /** Whether a built context still serves; when it does not (e.g. its connection ended for good) the next call builds anew. */
  readonly isUsable?: ((context: Context.Context<R>) => boolean) | undefined
}

/** What one build made: the services, and the scope that closes them. */
export interface Opened<R> {
  readonly context: Context.Context<R>
  readonly scope: Scope.Closeable
}

export interface PromiseRuntime<R> {
  /** The built services (building them on the first call). Rejects with the build's error, or the closed error. */
  readonly open: () => Promise<Opened<R>>
  /**
   * The built services when a build has finished and still serves, else undefined (not built yet,
   * building, closed, or to be built anew): for callers that skip running an Effect when they can.
   */
  readonly current: () => Context.Context<R> | undefined
  /** Runs an effect with the services. Rejects with the effect's error itself (`e._tag`). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, R>) => Promise<A>
  /** Runs an effect whose resources (fibers, finalizers) live until `reset()` or `close()`. */
  readonly runScoped: <A, E>(effect: Effect.Effect<A, E, R | Scope.Scope>) => Promise<A>
  /** Closes what was built; the next call builds again. */
  readonly reset: () => Promise<void>
  /** Closes what was built, for good. Safe to call more than once. */
  readonly close: () => Promise<void>
}

/** A lazily built runtime over `layer` (see the module comment). */
export const makePromiseRuntime = <R, E>(
  layer: Layer.Layer<R, E>,
  options: PromiseRuntimeOptions<R> = {}
): PromiseRuntime<R> => {
  const { wrap, onOpen, isUsable } = options
  const closedError =
    options.closedError ??
    (() => new RuntimeClosed({ message: "this effect-asynq runtime is closed; create a new one" }))
  const runPromise = <A, X>(effect: Effect.Effect<A, X>): Promise<A> => Effect.runPromise(wrap ? wrap(effect) : effect)
  const closeScope = (scope: Scope.Closeable) => runPromise(Scope.close(scope, Exit.void))

  let opening: Promise<Opened<R>> | undefined
  // Set once a build has finished: calls then run at once (no promise hop, no lookup per call).
  let ready:
    | { readonly opened: Opened<R>; readonly runWith: <A, X>(effect: Effect.Effect<A, X, R>) => Promise<A> }
    | undefined
  let closed = false

  const build = (): Promise<Opened<R>> => {
    const fresh = runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(layer, scope).pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        )
        return { context, scope }
      })
    )
    opening = fresh
    // Registered before any caller's callback, so `ready` and onOpen are set before a caller runs.
    fresh.then(
      (opened) => {
        if (opening !== fresh) return // closed or reset while building: `shut` closes it
        onOpen?.(opened.context)
        const runWith = Effect.runPromiseWith(opened.context)
        ready = { opened, runWith: wrap ? (effect) => runWith(wrap(effect)) : runWith }
      },
      () => {
        if (opening === fresh) opening = undefined // not remembered: the next call builds again
      }
    )
    return fresh
  }

  /** Drops a build that no longer serves (its connection ended for good); its scope is closed in the background. */
  const discard = (opened: Opened<R>) => {
    if (ready?.opened === opened) ready = undefined
    opening = undefined
    void closeScope(opened.scope).catch(() => {})
  }

  const usable = (opened: Opened<R>) => isUsable === undefined || isUsable(opened.context)

  const open = (): Promise<Opened<R>> => {
    if (closed) return Promise.reject(closedError())
    if (ready !== undefined) {
      if (usable(ready.opened)) return Promise.resolve(ready.opened)
      discard(ready.opened)
    }
    const current = opening ?? build()
    return current.then((opened) => {
      if (closed) throw closedError()
      if (opening !== current) return open() // reset while connecting: connect again
      if (usable(opened)) return opened
      discard(opened)
      return open()
    })
  }

  const shut = async () => {
    const current = opening
    opening = undefined
    ready = undefined
    if (current === undefined) return
    const opened = await current.catch(() => undefined)
    if (opened) await closeScope(opened.scope)
  }

  return {
    open,
    current: () => {
      const r = ready
      return r !== undefined && usable(r.opened) ? r.opened.context : undefined
    },
    run: (effect) => {
      const r = ready
      if (r !== undefined && usable(r.opened)) return r.runWith(effect)
      return open().then((opened) => runPromise(Effect.provideContext(effect, opened.context)))
    },
    runScoped: (effect) =>
      open().then((opened) =>
        runPromise(effect.pipe(Scope.provide(opened.scope), Effect.provideContext(opened.context)))
      ),
    reset: shut,
    close: () => {
      closed = true
      return shut()
    }
  }
}

/** A runtime over Broker + Redis at the resolved address (see resolveRedisOptions), over ioredis. */
export const makeBrokerRuntime = (
  redis?: RedisOptions | string,
  options?: PromiseRuntimeOptions<Broker | Redis>
): PromiseRuntime<Broker | Redis> => makePromiseRuntime(brokerLayer(redis), options)
