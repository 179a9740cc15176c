/**
 * `tsx bench/idleCost.ts [--seconds=60] [--queues=10] [--src=DIR]` — what an idle worker costs
 * Redis: one Server (all options at their defaults) on `--queues` empty queues, on a private
 * redis-server, for `--seconds` after a 3 s settling time; prints the Redis commands per second it
 * sent (INFO commandstats, which also counts the commands run inside Lua scripts, so both are
 * shown: client commands, i.e. round trips, and all commands), by command.
 * `--src=DIR` runs the effect-asynq sources of another checkout (e.g. the main branch extracted
 * with `git archive main | tar -x -C DIR`), for a before/after comparison in the same conditions.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Redis } from "ioredis"
import { startBenchRedis } from "./redisServer.js"
import { redisDelta, redisSnapshot } from "./measure.js"
import { optionOf } from "./toolCli.js"

const arg = optionOf(process.argv)

/** Commands a client sends itself; the others in commandstats were run by scripts. */
const clientCommands = new Set([
  "evalsha",
  "eval",
  "blpop",
  "brpop",
  "bzpopmin",
  "ping",
  "publish",
  "subscribe",
  "psubscribe",
  "client",
  "info",
  "hello",
  "select",
  "script",
  "multi",
  "exec",
  "quit"
])

const main = async () => {
  const seconds = Number(arg("seconds", "60"))
  const queueCount = Number(arg("queues", "10"))
  const srcRoot = resolve(arg("src", new URL("..", import.meta.url).pathname))
  const load = (path: string) => import(pathToFileURL(`${srcRoot}/${path}`).href)
  const { Effect, Exit, Layer, References, Scope } = await import("effect")
  const { Broker } = await load("src/broker/Broker.ts")
  const { Redis: RedisService } = await load("src/redis/Redis.ts")
  const { Server } = await load("src/processor/index.ts")
  const redis = await startBenchRedis()
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 })
  const scope = await Effect.runPromise(Scope.make())
  try {
    const queues = Object.fromEntries(Array.from({ length: queueCount }, (_, i) => [`idle-${i}`, 1]))
    const layer = Broker.layer.pipe(Layer.provide(RedisService.layer({ url: redis.url })))
    await Effect.runPromise(
      Effect.gen(function* () {
        const context = yield* Layer.buildWithScope(layer, scope)
        yield* Server.start({ idle: () => {} }, { queues }).pipe(Scope.provide(scope), Effect.provideContext(context))
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Warn")) as import("effect").Effect.Effect<
        void,
        unknown
      >
    )
    await new Promise((r) => setTimeout(r, 3000))
    const before = await redisSnapshot(admin)
    await new Promise((r) => setTimeout(r, seconds * 1000))
    const after = await redisSnapshot(admin)
    const delta = redisDelta(before, after)
    // The two snapshots' own INFO calls are the admin's, not the worker's.
    const byCommand = Object.entries(delta.byCommand)
      .filter(([c]) => c !== "info")
      .sort((a, b) => b[1] - a[1])
    const total = byCommand.reduce((n, [, v]) => n + v, 0)
    const sent = byCommand.filter(([c]) => clientCommands.has(c)).reduce((n, [, v]) => n + v, 0)
    console.log(`idle worker on ${queueCount} queues, ${seconds} s, sources ${srcRoot}:`)
    console.log(
      `  client commands (round trips): ${(sent / seconds).toFixed(2)}/s; all commands incl. inside scripts: ${(total / seconds).toFixed(2)}/s`
    )
    for (const [c, v] of byCommand) console.log(`  ${c.padEnd(16)} ${(v / seconds).toFixed(3)}/s`)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    admin.disconnect()
    await redis.stop()
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
