import { Effect } from "effect"
import { Cluster } from "ioredis"
import { Broker } from "../broker/Broker.js"
import { queueKeys } from "../wire/keys.js"
import { NotACluster } from "./errors.js"
import { keySlot } from "../redis/keySlot.js"
import type { ClusterNode } from "./types.js"

/** The Redis Cluster hash slot all keys of a queue live in (asynq's ClusterKeySlot); computed locally. */
export const clusterKeySlot = Effect.fn("Inspector.clusterKeySlot")(function* (queue: string) {
  return keySlot(queueKeys(queue).pending)
})

type SlotRange = [number, number, ...Array<[string, number, string?, ...Array<unknown>]>]

/** The nodes (master first, then replicas) serving a queue's slot (asynq's ClusterNodes). NotACluster on a single Redis. */
export const clusterNodes = Effect.fn("Inspector.clusterNodes")(function* (queue: string) {
  const { redis } = yield* Broker
  if (!(redis.client instanceof Cluster)) {
    return yield* new NotACluster({ target: redis.target, message: `Redis at ${redis.target} is not a Redis Cluster; cluster nodes exist only in cluster mode` })
  }
  const slot = keySlot(queueKeys(queue).pending)
  const ranges = (yield* redis.use("cluster slots", (c) => c.call("CLUSTER", "SLOTS"))) as ReadonlyArray<SlotRange>
  for (const [from, to, ...nodes] of ranges) {
    if (from <= slot && slot <= to) return nodes.map((n): ClusterNode => ({ id: String(n[2] ?? ""), addr: `${n[0]}:${n[1]}` }))
  }
  return [] as ReadonlyArray<ClusterNode>
})
