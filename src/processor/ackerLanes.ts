/**
 * The acknowledgement batcher a server uses, by deployment. Single node or Sentinel: one Acker
 * (acker.ts), unchanged: every completion shares one round trip. Redis Cluster: one Acker per
 * queue (a queue's keys share one hash slot), so a batch never waits on a shard other than its own
 * queue's: while a master is down (a failover), only its queues' completions wait, and the queues
 * on healthy masters keep completing at their pace. On a Cluster the next fetch does not ride
 * along with completions (it would tie a healthy lane to the fetched queue's shard); the fetch
 * loop fetches on its own when slots free up.
 */
import type { BrokerShape } from "../broker/Broker.js"
import { type Acker, makeAcker, type Rider } from "./acker.js"

const laneAcker = (): Acker => {
  const lanes = new Map<string, Acker>()
  const laneOf = (queue: string): Acker => {
    let lane = lanes.get(queue)
    if (lane === undefined) {
      lane = makeAcker()
      lanes.set(queue, lane)
    }
    return lane
  }
  return {
    complete: (msg) => laneOf(msg.queue).complete(msg)
  }
}

/** One Acker (single node, Sentinel), carrying `rider`'s fetches when given, or one per queue (Redis Cluster, no rider). */
export const makeAckerFor = (broker: BrokerShape, rider?: Rider): Acker =>
  broker.redis.isCluster ? laneAcker() : makeAcker(rider)
