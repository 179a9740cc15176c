import * as Effect from "effect/Effect"
import { clusterSlotNodes } from "../broker/cluster.js"
import { keySlot } from "../redis/keySlot.js"
import { queueKeys } from "../wire/keys.js"
import type { ClusterNode } from "./types.js"

/** The Redis Cluster hash slot all keys of a queue live in (asynq's ClusterKeySlot); computed locally. */
export const clusterKeySlot = Effect.fn("Inspector.clusterKeySlot")(function* (queue: string) {
  return keySlot(queueKeys(queue).pending)
})

/** The nodes (master first, then replicas) serving a queue's slot (asynq's ClusterNodes). NotACluster on a single Redis. */
export const clusterNodes = Effect.fn("Inspector.clusterNodes")(function* (queue: string) {
  return (yield* clusterSlotNodes(keySlot(queueKeys(queue).pending))) as ReadonlyArray<ClusterNode>
})
