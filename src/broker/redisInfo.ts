/**
 * Redis INFO, raw: what the dashboard's Redis page shows (asynqmon's /api/redis_info). On a Redis
 * Cluster it is the INFO of every master node, keyed by address.
 */
import * as Effect from "effect/Effect"
import { Cluster } from "ioredis"
import { Broker } from "./Broker.js"

export interface RedisInfoReply {
  /** `host:port` of the node that answered ("" for a single node or a Sentinel-managed master). */
  readonly address: string
  /** INFO's text as Redis sent it. */
  readonly raw: string
}

/** INFO of the Redis the broker talks to (each master of a cluster). */
export const readRedisInfo = Effect.fn("Broker.readRedisInfo")(function* () {
  const { redis } = yield* Broker
  const client = redis.client
  if (client instanceof Cluster) {
    return yield* redis.use("info", () =>
      Promise.all(
        client.nodes("master").map(
          async (node): Promise<RedisInfoReply> => ({
            address: `${node.options.host}:${node.options.port}`,
            raw: await node.info()
          })
        )
      )
    )
  }
  const raw = yield* redis.use("info", (c) => c.info())
  const reply: RedisInfoReply = { address: "", raw }
  return [reply]
})
