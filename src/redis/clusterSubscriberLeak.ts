/**
 * A workaround for an ioredis 6 listener leak (redis/ioredis#2030) that retrying forever would
 * otherwise grow without bound during a Cluster outage.
 *
 * A Cluster keeps a pub/sub connection of its own. Each time it picks a new one (at every
 * reconnect attempt while the nodes are down) it first disconnects the last connection that held
 * the subscriptions; once that connection has ended, its socket is closed, yet each such
 * disconnect adds one more "close" listener to it (MaxListenersExceededWarning after ten
 * attempts). Skipping the disconnect of an ended connection changes nothing else: ioredis still
 * reads that connection's channels to subscribe them again on the new one.
 *
 * This touches ioredis internals (`cluster.subscriber.selectSubscriber`); when they are not there
 * (another ioredis version), it does nothing.
 */
import type { Cluster } from "ioredis"

interface SubscriberConnection {
  readonly status: string
  disconnect: () => void
}
interface ClusterSubscriberInternals {
  lastActiveSubscriber?: SubscriberConnection | null
  selectSubscriber?: () => void
}

/** Stops `cluster` from adding a listener to a closed socket at every reconnect attempt. */
export const preventSubscriberListenerLeak = (cluster: Cluster): void => {
  const subscriber = (cluster as unknown as { subscriber?: ClusterSubscriberInternals }).subscriber
  const select = subscriber?.selectSubscriber
  if (subscriber === undefined || typeof select !== "function") return
  subscriber.selectSubscriber = () => {
    const last = subscriber.lastActiveSubscriber
    if (!last || last.status !== "end") return select.call(subscriber)
    const disconnect = last.disconnect
    last.disconnect = () => {}
    try {
      return select.call(subscriber)
    } finally {
      last.disconnect = disconnect
    }
  }
}
