import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { Broker } from "../../src/broker/Broker.js"
import { type IdleSockets, idleSockets } from "../../src/redis/idleSockets.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { Redis } from "../../src/redis/Redis.js"
import { brokerLayer as facadeBrokerLayer, makePromiseRuntime } from "../../src/runtime/promiseRuntime.js"

/**
 * The services of one function container, built on the first invocation and reused by the warm
 * ones after it (one Redis connection per container), on the facades' shared Promise runtime.
 * Between invocations the connection's socket is unref'd (also a socket ioredis reconnects while
 * idle), so it never keeps the Node.js event loop alive after a handler returns; while an
 * invocation runs it is ref'd again. A connection closed for good is replaced on the next run.
 */
export interface WarmRuntime<R> {
  /** Runs one invocation's program with the container's services. Rejects with the program's error. */
  readonly run: <A, E>(program: Effect.Effect<A, E, R>) => Promise<A>
  /** Closes the connection (QUIT). The next `run` connects again. */
  readonly dispose: () => Promise<void>
}

/** A warm runtime over any Layer that contains Redis (e.g. Broker + Redis + your services). */
export const makeWarmRuntime = <R, E>(layer: Layer.Layer<R | Redis, E>): WarmRuntime<R | Redis> => {
  type S = R | Redis
  let inFlight = 0
  const socketsOf = new WeakMap<Context.Context<S>, IdleSockets>()
  const idle = (context: Context.Context<S>) => socketsOf.get(context)!
  const runtime = makePromiseRuntime(layer, {
    onOpen: (context) => socketsOf.set(context, idleSockets(Context.get(context as Context.Context<Redis>, Redis), () => inFlight === 0)),
    isUsable: (context) => !idle(context).ended()
  })

  return {
    run: async (program) => {
      inFlight++
      let sockets: IdleSockets | undefined
      try {
        const { context } = await runtime.open()
        sockets = idle(context)
        sockets.hold(true)
        return await Effect.runPromiseWith(context)(program)
      } finally {
        inFlight--
        if (sockets && inFlight === 0) sockets.hold(false)
      }
    },
    dispose: runtime.reset
  }
}

/** The usual container: Broker over one Redis connection (`options`, else REDIS_URL, else redis://127.0.0.1:6379). */
export const brokerLayer = (options?: RedisOptions): Layer.Layer<Broker | Redis, unknown> => facadeBrokerLayer(options)

export const makeBrokerRuntime = (options?: RedisOptions): WarmRuntime<Broker | Redis> => makeWarmRuntime(brokerLayer(options))
