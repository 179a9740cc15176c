/** The chaos suite's Redis Cluster: 3 masters + 3 replicas on loopback, and queues placed on given masters. */
import { Cluster } from "ioredis"
import { keySlot } from "../../src/redis/keySlot.js"
import { queueKeys } from "../../src/wire/keys.js"
import { type ClusterOptions, type RedisClusterHandle, startRedisCluster } from "../../test/support/cluster.js"
import { track } from "./support.js"

export const startChaosCluster = async (options: ClusterOptions = {}): Promise<RedisClusterHandle> => {
  const cluster = await startRedisCluster(60_000, { replicas: 1, ...options })
  track(cluster.stop)
  return cluster
}

/** One queue per master (named `<prefix><n>`), with that master's port. */
export const queuePerMaster = async (
  cluster: RedisClusterHandle,
  prefix: string
): Promise<ReadonlyArray<{ readonly queue: string; readonly port: number }>> => {
  const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })))
  c.on("error", () => {})
  try {
    await c.call("PING")
    const byOwner = new Map<string, string>()
    for (let i = 0; byOwner.size < 3 && i < 1000; i++) {
      const owner = c.slots[keySlot(queueKeys(`${prefix}${i}`).pending)]?.[0]
      if (owner !== undefined && !byOwner.has(owner)) byOwner.set(owner, `${prefix}${i}`)
    }
    return [...byOwner.entries()].map(([owner, queue]) => ({ queue, port: Number(owner.split(":")[1]) }))
  } finally {
    c.disconnect()
  }
}
