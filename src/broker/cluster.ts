import * as Effect from "effect/Effect"
import { Broker } from "./Broker.js"
import { NotACluster } from "./errors.js"

type SlotRange = [number, number, ...Array<[string, number, string?, ...Array<unknown>]>]

/** A node serving a slot: its id and `host:port`. */
export interface SlotNode {
  readonly id: string
  readonly addr: string
}

/** The nodes (master first, then replicas) serving a hash slot (CLUSTER SLOTS). NotACluster on a single Redis. */
export const clusterSlotNodes = Effect.fn("Broker.clusterSlotNodes")(function* (slot: number) {
  const { redis } = yield* Broker
  if (!redis.isCluster) {
    return yield* new NotACluster({
      target: redis.target,
      message: `Redis at ${redis.target} is not a Redis Cluster; cluster nodes exist only in cluster mode`
    })
  }
  const ranges = (yield* redis.use("cluster slots", (c) => c.call("CLUSTER", "SLOTS"))) as ReadonlyArray<SlotRange>
  for (const [from, to, ...nodes] of ranges) {
    if (from <= slot && slot <= to)
      return nodes.map((n): SlotNode => ({ id: String(n[2] ?? ""), addr: `${n[0]}:${n[1]}` }))
  }
  return [] as ReadonlyArray<SlotNode>
})
