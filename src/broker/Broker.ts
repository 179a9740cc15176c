import { MessageSizes } from "./messageSizes.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RedisShape } from "../redis/Redis.js"
import { RedisService } from "../redis/RedisService.js"
import { KnownQueues } from "./knownQueues.js"

/**
 * The broker: the Redis service plus what the queue steps remember between calls (which queues
 * are already registered in `asynq:queues`, so enqueue can skip that SADD). src/broker/ is the only
 * code that talks to Redis: one descriptor per Lua script (src/broker/script.ts: how its KEYS and
 * ARGV are built, how its reply decodes; run with `runScript`/`runScripts`), plus the few raw reads
 * and pub/sub operations. src/steps/, the inspector, the scheduler and the processor compose them.
 */
export interface BrokerShape {
  readonly redis: RedisShape
  /** Queues recently registered in `asynq:queues` (enqueue skips the SADD; see KnownQueues). */
  readonly knownQueues: KnownQueues
  /** The recent average message size per queue, which picks the way a worker leases (MessageSizes). */
  readonly messageSizes: MessageSizes
}

/** The service every step runs over: one typed operation per Lua script or Redis read. `Broker.layer` builds it over the `Redis` service. */
export class Broker extends Context.Service<Broker, BrokerShape>()("effect-asynq/Broker") {
  /** The broker over the Redis service in context. */
  static readonly layer: Layer.Layer<Broker, never, RedisService> = Layer.effect(
    Broker,
    Effect.map(
      RedisService,
      (redis): BrokerShape => ({ redis, knownQueues: new KnownQueues(), messageSizes: new MessageSizes() })
    )
  )
}
