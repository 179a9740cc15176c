/** Runs a command's Effect with a Broker on the Redis the user chose; connection failures fail fast. */
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { redisTarget } from "./globalFlags.js"

export const withBroker = <A, E, R>(eff: Effect.Effect<A, E, R | Broker>) =>
  Effect.gen(function* () {
    const target = yield* redisTarget
    return yield* eff.pipe(Effect.provide(brokerLayer({ ...target, connectTimeoutMs: 3000, maxRetriesPerRequest: 1 })))
  })
