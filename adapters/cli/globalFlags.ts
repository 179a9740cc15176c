/**
 * Flags every command accepts, before or after the subcommand: where Redis is (--redis-url,
 * --redis-cluster, --redis-sentinel with --redis-sentinel-name) and --json.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Flag, GlobalFlag } from "effect/cli"
import type { InvalidArgument } from "../../src/broker/errors.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { resolveRedisOptions } from "../../src/runtime/promiseRuntime.js"
import { redisTargetFromFlags } from "./redisTarget.js"
import { parseRedisUrl } from "./redisUrl.js"

export const RedisUrl = GlobalFlag.Setting("redis-url")({
  flag: Flag.String("redis-url").pipe(
    Flag.withDescription(
      "Redis to connect to, redis://[user:pass@]host:port[/db], rediss://… or host:port[/db] (default: $REDIS_URL, else redis://127.0.0.1:6379); with --redis-cluster or --redis-sentinel it only gives the credentials and TLS"
    ),
    Flag.optional
  )
})

export const RedisCluster = GlobalFlag.Setting("redis-cluster")({
  flag: Flag.String("redis-cluster").pipe(
    Flag.withDescription("Redis Cluster seed nodes, host:port,host:port,…"),
    Flag.optional
  )
})

export const RedisSentinel = GlobalFlag.Setting("redis-sentinel")({
  flag: Flag.String("redis-sentinel").pipe(
    Flag.withDescription("Redis Sentinel nodes, host:port,host:port,… (with --redis-sentinel-name)"),
    Flag.optional
  )
})

export const RedisSentinelName = GlobalFlag.Setting("redis-sentinel-name")({
  flag: Flag.String("redis-sentinel-name").pipe(
    Flag.withDescription("Name of the master the sentinels watch (with --redis-sentinel)"),
    Flag.optional
  )
})

export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("Print machine-readable JSON instead of tables"),
    Flag.withDefault(false)
  )
})

/** The connection flags, registered on the app. */
export const connectionFlags = [RedisUrl, RedisCluster, RedisSentinel, RedisSentinelName] as const

type ConnectionFlagIds =
  | GlobalFlag.Setting.Identifier<"redis-url">
  | GlobalFlag.Setting.Identifier<"redis-cluster">
  | GlobalFlag.Setting.Identifier<"redis-sentinel">
  | GlobalFlag.Setting.Identifier<"redis-sentinel-name">

/**
 * The Redis the connection flags name, or None when none was given; an InvalidArgument (exit 2)
 * when they do not fit together or a node list does not parse.
 */
export const explicitRedisTarget: Effect.Effect<
  Option.Option<RedisOptions>,
  InvalidArgument,
  ConnectionFlagIds
> = Effect.gen(function* () {
  const url = yield* RedisUrl
  const cluster = yield* RedisCluster
  const sentinel = yield* RedisSentinel
  const sentinelName = yield* RedisSentinelName
  return yield* redisTargetFromFlags({
    url: Option.getOrUndefined(url),
    cluster: Option.getOrUndefined(cluster),
    sentinel: Option.getOrUndefined(sentinel),
    sentinelName: Option.getOrUndefined(sentinelName)
  })
})

/** The Redis a command connects to: the flags, else REDIS_URL (checked as the flag is), else the local default. */
export const redisTarget: Effect.Effect<RedisOptions, InvalidArgument, ConnectionFlagIds> = Effect.gen(function* () {
  const explicit = yield* explicitRedisTarget
  if (Option.isSome(explicit)) return explicit.value
  const env = process.env.REDIS_URL
  return env !== undefined && env !== ""
    ? { url: yield* parseRedisUrl("REDIS_URL", env) }
    : resolveRedisOptions(undefined)
})
