/** In-process servers on this test file's database. */
import { Effect, Exit, Layer, References, Scope } from "effect"
import { TestClock } from "effect/testing"
import type * as Context from "effect/Context"
import type { Broker } from "../../src/broker/Broker.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import * as Server from "../../src/processor/Server.js"
import { enqueue } from "../../src/steps/enqueue.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { brokerLayerAt, testBrokerLayer } from "../support/arrange.js"

export interface TestServer {
  readonly handle: Server.ServerHandle
  readonly run: <A, E>(eff: Effect.Effect<A, E, Broker>) => Promise<A>
  /** Enqueues (and publishes the wake-up the enqueue script will do itself later). */
  readonly enqueue: (type: string, payload?: unknown, options?: EnqueueOptions) => Promise<string>
  readonly shutdown: () => Promise<number>
}

/** Logs at Error and above only, unless DEBUG_TESTS is set. */
const quiet = <A, E, R>(eff: Effect.Effect<A, E, R>) =>
  process.env.DEBUG_TESTS ? eff : eff.pipe(Effect.provideService(References.MinimumLogLevel, "Error"))

/**
 * A server on this file's database, or on `redis` (e.g. a private redis-server). With
 * `testClockAtMs`, the server's Effect Clock is a TestClock set to that time, which moves only when
 * the test says so: `run(TestClock.adjust(…))`.
 */
export const startServer = async (
  handlers: HandlerInput,
  options: ServerOptions = {},
  redis?: RedisOptions,
  testClockAtMs?: number
): Promise<TestServer> => {
  const scope = await Effect.runPromise(Scope.make())
  const broker = (redis === undefined ? testBrokerLayer() : brokerLayerAt(redis)) as Layer.Layer<Broker, never>
  const layer = testClockAtMs === undefined ? broker : Layer.merge(broker, TestClock.layer())
  const context = (await Effect.runPromise(Layer.buildWithScope(layer, scope))) as Context.Context<Broker>
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>) => Effect.runPromise(quiet(Effect.provideContext(eff, context)))
  if (testClockAtMs !== undefined) await run(TestClock.setTime(testClockAtMs))
  const handle = await run(Server.start(handlers, options).pipe(Scope.provide(scope)))
  let closed: Promise<number> | undefined
  return {
    handle,
    run,
    enqueue: async (type, payload, opts) => {
      const info = await run(enqueue(type, payload, opts))
      return info.id
    },
    shutdown: () => (closed ??= run(handle.shutdown).finally(() => Effect.runPromise(Scope.close(scope, Exit.void))))
  }
}

/** Runs an Effect needing the Broker on this file's database (a fresh connection, closed after). */
export const runBroker = <A, E>(eff: Effect.Effect<A, E, Broker>): Promise<A> =>
  Effect.runPromise(quiet(eff.pipe(Effect.provide(testBrokerLayer() as Layer.Layer<Broker, never>))))
