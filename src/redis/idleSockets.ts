/**
 * Lets a connection's sockets stop holding the Node.js event loop while it sits idle (between two
 * serverless invocations), and hold it again while it is in use. Covers every socket of the
 * client: the one connection, or each node of a Redis Cluster, including a socket ioredis opens
 * later (a reconnect, a node the cluster discovers) while the connection is idle.
 */
import type { EventEmitter } from "node:events"
import type { RedisClient, RedisShape } from "./Redis.js"
import { isClusterClient } from "./ioredisService.js"
import type { LightRedisShape } from "./lightRedis.js"

type Socket = { ref(): unknown; unref(): unknown }
type Connection = EventEmitter & { stream?: unknown }

export interface IdleSockets {
  /** `true`: the sockets hold the event loop (in use); `false`: they do not (idle). */
  readonly hold: (held: boolean) => void
  /** Whether the connection was closed for good (e.g. the server went away and retries ran out). */
  readonly ended: () => boolean
}

/** Every connection of a client: the client itself, or each node of a cluster. */
const connections = (c: RedisClient): ReadonlyArray<Connection> => (isClusterClient(c) ? c.nodes("all") : [c])

/** All sockets of a client (one, or one per node of a cluster). */
const sockets = (c: RedisClient): ReadonlyArray<Socket> =>
  connections(c).flatMap((n) =>
    n.stream && typeof (n.stream as { unref?: unknown }).unref === "function" ? [n.stream as Socket] : []
  )

/**
 * Controls the sockets of `redis`'s connection. `isIdle` tells, when ioredis opens a new socket,
 * whether it must be released at once (nothing is using the connection then).
 */
export const idleSockets = (redis: RedisShape, isIdle: () => boolean): IdleSockets => {
  // The light transport (lightRedis.ts) has one socket it controls itself, and never ends: a
  // dropped connection is opened again by the next call.
  if ("holdSocket" in redis) return { hold: (redis as LightRedisShape).holdSocket, ended: () => false }
  const client = redis.client
  const hold = (held: boolean) => {
    for (const s of sockets(client)) held ? s.ref() : s.unref()
  }
  // ioredis opens a new socket when it reconnects (say, after the server dropped an idle
  // connection): if that happens while idle, the new socket must not hold the loop either.
  const onConnect = () => {
    if (isIdle()) hold(false)
  }
  for (const n of connections(client)) n.on("connect", onConnect)
  if (isClusterClient(client)) client.on("+node", (n: EventEmitter) => n.on("connect", onConnect))
  return { hold, ended: () => client.status === "end" }
}
