import * as Effect from "effect/Effect"
import { readRedisInfo } from "../broker/redisInfo.js"

/** One Redis node's INFO: the raw text and its `key:value` lines as a record (asynqmon's redis_info). */
export interface RedisNodeInfo {
  /** `host:port` of a cluster node; "" for a single node or a Sentinel-managed master. */
  readonly address: string
  readonly info: Readonly<Record<string, string>>
  readonly raw: string
}

/** Parses INFO's text: `# Section` headers and blank lines are skipped, `key:value` lines kept. */
export const parseRedisInfo = (raw: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const line of raw.split(/\r?\n/)) {
    if (line === "" || line.startsWith("#")) continue
    const colon = line.indexOf(":")
    if (colon > 0) out[line.slice(0, colon)] = line.slice(colon + 1)
  }
  return out
}

/** INFO of the Redis server (each master of a Redis Cluster), parsed. */
export const redisInfo = Effect.fn("Inspector.redisInfo")(function* () {
  const replies = yield* readRedisInfo()
  return replies.map((r): RedisNodeInfo => ({ address: r.address, info: parseRedisInfo(r.raw), raw: r.raw }))
})
