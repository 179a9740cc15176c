/** Runs a command's Effect with a Broker on the Redis the user chose; connection failures fail fast. */
import { Effect, Layer } from "effect"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { redisTarget } from "./globalFlags.js"

export const withBroker = <A, E, R>(eff: Effect.Effect<A, E, R | Broker>) =>
  Effect.gen(function* () {
    const target = yield* redisTarget
    const layer = Broker.layer.pipe(Layer.provide(Redis.layer({ ...target, connectTimeoutMs: 3000, maxRetriesPerRequest: 1 })))
    return yield* eff.pipe(Effect.provide(layer))
  })
