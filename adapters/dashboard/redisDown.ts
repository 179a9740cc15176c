/**
 * What the dashboard says when Redis does not answer: its own one line naming the address
 * ("Redis at 127.0.0.1:6379 is not answering …"), not the driver's text ("Reached the max retries
 * per request limit …"). An error reply from Redis (an answer: OOM, WRONGTYPE, CLUSTERDOWN) is
 * shown as Redis worded it.
 */
import * as Layer from "effect/Layer"
import { isErrorReply } from "../../src/redis/errors.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { resolveRedisOptions } from "../../src/runtime/promiseRuntime.js"
import type { DashboardOptions } from "./handler.js"

type Node = { readonly host?: unknown; readonly port?: unknown }
const nodes = (list: ReadonlyArray<Node>) => list.map((n) => `${String(n.host)}:${String(n.port)}`).join(",")

/** host:port of a redis:// URL (no credentials), or the scheme-less address as given. */
const urlAddress = (url: string): string => {
  if (!url.includes("://")) return url
  try {
    return new URL(url).host
  } catch {
    return "(unparseable Redis URL)"
  }
}

/**
 * The address to name in messages for the dashboard's `redis` option: host:port, a Cluster's or
 * Sentinel's nodes, an application client's address; undefined for a Layer (not known here).
 */
export const redisAddressOf = (source: DashboardOptions["redis"]): string | undefined => {
  if (source !== undefined && typeof source !== "string" && Layer.isLayer(source)) return undefined
  if (source !== undefined && typeof (source as { sendCommand?: unknown }).sendCommand === "function") {
    const client = source as { readonly options?: Node; readonly startupNodes?: ReadonlyArray<Node> }
    if (Array.isArray(client.startupNodes)) return `cluster ${nodes(client.startupNodes)}`
    return client.options?.host !== undefined ? nodes([client.options]) : undefined
  }
  const o = resolveRedisOptions(source as RedisOptions | string | undefined)
  if (o.cluster) return `cluster ${nodes(o.cluster)}`
  if (o.sentinel) return `sentinel ${o.sentinel.name}@${nodes(o.sentinel.sentinels)}`
  return urlAddress(o.url ?? "")
}

/**
 * Whether a command failed because Redis did not answer (the connection is lost, or the reply did not
 * come in time), not because Redis answered with an error. (Opening the connection fails with a
 * RedisConnectionError, whose message is already ours and names the address.)
 */
export const isRedisUnavailable = (e: unknown): boolean => {
  if (typeof e !== "object" || e === null || !("_tag" in e)) return false
  const { _tag: tag, cause } = e as { readonly _tag: unknown; readonly cause?: unknown }
  // A RedisError without a cause is not a transport failure (e.g. an operation the transport lacks).
  return tag === "RedisError" && cause !== undefined && !isErrorReply(cause)
}

/** The one-line message for an unavailable Redis. */
export const redisUnavailableMessage = (address: string | undefined): string =>
  `${address === undefined ? "Redis" : `Redis at ${address}`} is not answering (not reachable, or stalled); the dashboard tries again on the next request`
