/** Flags every command accepts, before or after the subcommand: --redis-url and --json. */
import { Effect, Option } from "effect"
import { Flag, GlobalFlag } from "effect/cli"

export const RedisUrl = GlobalFlag.Setting("redis-url")({
  flag: Flag.String("redis-url").pipe(
    Flag.withDescription("Redis to connect to, redis://[user:pass@]host:port[/db] or rediss://… (default: $REDIS_URL, else redis://127.0.0.1:6379)"),
    Flag.optional
  )
})

export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(Flag.withDescription("Print machine-readable JSON instead of tables"), Flag.withDefault(false))
})

/** The Redis URL to use: the flag, else REDIS_URL, else the local default. */
export const redisUrl: Effect.Effect<string, never, GlobalFlag.Setting.Identifier<"redis-url">> = Effect.map(RedisUrl, (o: Option.Option<string>) =>
  Option.getOrElse(o, () => (process.env.REDIS_URL && process.env.REDIS_URL !== "" ? process.env.REDIS_URL : "redis://127.0.0.1:6379"))
)
