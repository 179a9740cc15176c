import { Context, Effect, Layer } from "effect"
import { Redis, type RedisShape } from "../redis/Redis.js"

/**
 * The broker: the Redis service plus what the queue steps remember between calls (which queues
 * are already registered in `asynq:queues`, so enqueue can skip that SADD). Every function in
 * src/broker/ runs one Lua script (or one read) through it; src/steps/ composes them.
 */
export interface BrokerShape {
  readonly redis: RedisShape
  /** Queues known to be in `asynq:queues` (skip the SADD on enqueue). */
  readonly knownQueues: Set<string>
}

export class Broker extends Context.Service<Broker, BrokerShape>()("effect-asynq/Broker") {
  /** The broker over the Redis service in context. */
  static readonly layer: Layer.Layer<Broker, never, Redis> = Layer.effect(
    Broker,
    Effect.map(Redis, (redis): BrokerShape => ({ redis, knownQueues: new Set<string>() }))
  )
}
