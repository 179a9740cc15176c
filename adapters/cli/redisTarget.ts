/** The Redis connection the CLI's flags describe: a URL, a Redis Cluster, or a Sentinel-managed master. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { InvalidArgument } from "../../src/broker/errors.js"
import type { RedisNode, RedisOptions } from "../../src/redis/options.js"
import { parseRedisUrl } from "./redisUrl.js"

export interface ConnectionFlagValues {
  readonly url: string | undefined
  readonly cluster: string | undefined
  readonly sentinel: string | undefined
  readonly sentinelName: string | undefined
}

/** Parses `host:port,host:port` (an IPv6 host in brackets: `[::1]:7000`) into nodes, or says what is wrong. */
export const parseNodeList = (flag: string, text: string): Effect.Effect<ReadonlyArray<RedisNode>, InvalidArgument> =>
  Effect.gen(function* () {
    const nodes: Array<RedisNode> = []
    for (const raw of text.split(",")) {
      const part = raw.trim()
      const colon = part.lastIndexOf(":")
      const host = colon > 0 ? part.slice(0, colon).replace(/^\[(.*)\]$/, "$1") : ""
      const portText = colon > 0 ? part.slice(colon + 1) : ""
      const port = Number(portText)
      if (host === "" || !/^\d+$/.test(portText) || port < 1 || port > 65535) {
        return yield* new InvalidArgument({
          field: flag,
          message: `--${flag} expects host:port,host:port,… with ports 1 to 65535; got "${part}"`
        })
      }
      nodes.push({ host, port })
    }
    return nodes
  })

/**
 * The connection the flags name, or None when none was given. --redis-cluster and --redis-sentinel
 * exclude each other; --redis-sentinel needs --redis-sentinel-name (and the name needs the nodes).
 * With either, --redis-url only supplies the credentials and TLS (see RedisOptions). The URL is
 * checked first (redisUrl.ts): `host:port[/db]` becomes `redis://host:port[/db]`.
 */
export const redisTargetFromFlags = (
  f: ConnectionFlagValues
): Effect.Effect<Option.Option<RedisOptions>, InvalidArgument> =>
  Effect.gen(function* () {
    const url = f.url !== undefined ? { url: yield* parseRedisUrl("redis-url", f.url) } : {}
    if (f.cluster !== undefined && f.sentinel !== undefined) {
      return yield* new InvalidArgument({
        field: "redis-cluster",
        message: "--redis-cluster and --redis-sentinel cannot be used together"
      })
    }
    if (f.sentinelName !== undefined && f.sentinel === undefined) {
      return yield* new InvalidArgument({
        field: "redis-sentinel-name",
        message: "--redis-sentinel-name needs --redis-sentinel host:port,…"
      })
    }
    if (f.cluster !== undefined)
      return Option.some({ ...url, cluster: yield* parseNodeList("redis-cluster", f.cluster) })
    if (f.sentinel !== undefined) {
      if (f.sentinelName === undefined || f.sentinelName === "") {
        return yield* new InvalidArgument({
          field: "redis-sentinel-name",
          message: "--redis-sentinel needs --redis-sentinel-name, the name of the master the sentinels watch"
        })
      }
      return Option.some({
        ...url,
        sentinel: { sentinels: yield* parseNodeList("redis-sentinel", f.sentinel), name: f.sentinelName }
      })
    }
    return f.url !== undefined ? Option.some(url) : Option.none()
  })
