import type { EventEmitter } from "node:events"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { Cluster } from "ioredis"
import { Broker } from "../../src/broker/Broker.js"
import { Redis, type RedisClient } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"

/**
 * The services of one function container, built on the first invocation and reused by the warm
 * ones after it (one Redis connection per container). Between invocations the connection's
 * socket is unref'd (also a socket ioredis reconnects while idle), so it never keeps the Node.js
 * event loop alive after a handler returns; while an invocation runs it is ref'd again.
 */
export interface WarmRuntime<R> {
  /** Runs one invocation's program with the container's services. Rejects with the program's error. */
  readonly run: <A, E>(program: Effect.Effect<A, E, R>) => Promise<A>
  /** Closes the connection (QUIT). The next `run` connects again. */
  readonly dispose: () => Promise<void>
}

type Built<R> = { readonly context: Context.Context<R>; readonly scope: Scope.Closeable; readonly client: RedisClient }

type Socket = { ref(): unknown; unref(): unknown }
type Connection = EventEmitter & { stream?: unknown }

/** Every connection of a client: the client itself, or each node of a cluster. */
const connections = (c: RedisClient): ReadonlyArray<Connection> => (c instanceof Cluster ? c.nodes("all") : [c])

/** All sockets of a client (one, or one per node of a cluster). */
const sockets = (c: RedisClient): ReadonlyArray<Socket> =>
  connections(c).flatMap((n) => (n.stream && typeof (n.stream as { unref?: unknown }).unref === "function" ? [n.stream as Socket] : []))

/** A warm runtime over any Layer that contains Redis (e.g. Broker + Redis + your services). */
export const makeWarmRuntime = <R, E>(layer: Layer.Layer<R | Redis, E>): WarmRuntime<R | Redis> => {
  type S = R | Redis
  let built: Promise<Built<S>> | undefined
  let inFlight = 0

  const build = () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(layer, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
        const client = Context.get(context as Context.Context<Redis>, Redis).client
        const b: Built<S> = { context, scope, client }
        unrefOnReconnect(b)
        return b
      })
    )

  // ioredis opens a new socket when it reconnects (say, after the server dropped an idle
  // connection): if that happens between invocations, the new socket must not hold the loop either.
  const unrefOnReconnect = (b: Built<S>) => {
    const onConnect = () => {
      if (inFlight === 0) setRef(b, false)
    }
    for (const n of connections(b.client)) n.on("connect", onConnect)
    if (b.client instanceof Cluster) b.client.on("+node", (n: EventEmitter) => n.on("connect", onConnect))
  }

  const acquire = (): Promise<Built<S>> => {
    if (built) {
      const current = built
      return current.then((b) => {
        if (b.client.status !== "end") return b
        // The connection was closed for good (e.g. the server went away and retries ran out): start over.
        if (built === current) built = undefined
        return acquire()
      })
    }
    const fresh = build()
    built = fresh
    fresh.catch(() => {
      if (built === fresh) built = undefined
    })
    return fresh
  }

  const setRef = (b: Built<S>, on: boolean) => {
    for (const s of sockets(b.client)) on ? s.ref() : s.unref()
  }

  return {
    run: async (program) => {
      inFlight++
      let b: Built<S> | undefined
      try {
        b = await acquire()
        setRef(b, true)
        return await Effect.runPromise(Effect.provideContext(program, b.context))
      } finally {
        inFlight--
        if (b && inFlight === 0) setRef(b, false)
      }
    },
    dispose: async () => {
      const current = built
      built = undefined
      if (!current) return
      const b = await current.catch(() => undefined)
      if (b) await Effect.runPromise(Scope.close(b.scope, Exit.void))
    }
  }
}

/** The usual container: Broker over one Redis connection (`options`, default REDIS_URL or redis://127.0.0.1:6379). */
export const brokerLayer = (options?: RedisOptions): Layer.Layer<Broker | Redis, unknown> =>
  Broker.layer.pipe(Layer.provideMerge(Redis.layer(options ?? { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" })))

export const makeBrokerRuntime = (options?: RedisOptions): WarmRuntime<Broker | Redis> => makeWarmRuntime(brokerLayer(options))
