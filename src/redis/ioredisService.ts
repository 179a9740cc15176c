/**
 * The Redis service around an open ioredis client (single node, Sentinel-managed or Cluster): the
 * script runner (ioredisScript.ts), the batch (ioredisBatch.ts) and the plain command, over what
 * they share (ioredisContext.ts). ioredis is imported for its types only, so code that wraps a
 * client the application opened (the serverless handlers' `redis: client`) does not carry ioredis
 * itself; connecting lives in Redis.ts.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RedisConnectionError, RedisError } from "./errors.js"
import { loadingWaiter, whileLoading } from "./loading.js"
import { defaultCommandTimeoutMs, defaultLoadingTimeoutMs, describeTarget, type RedisOptions } from "./options.js"
import { restoreFastStringPrototype } from "./fastStringPrototype.js"
import {
  type CommandClass,
  configuredTimeout,
  bounded,
  failure,
  framedEvalsha,
  isClusterClient,
  type ServiceContext
} from "./ioredisContext.js"
import { scriptBatch } from "./ioredisBatch.js"
import { runScriptPromise, runScriptSortedPromise } from "./ioredisScript.js"
import type { LuaName } from "./scripts.js"
import { type OutageEvents, watchOutages } from "./reconnect.js"
import type { RedisClient, RedisShape } from "./Redis.js"
import type { ScriptArg } from "./transport.js"

export { type CommandClass, isClusterClient } from "./ioredisContext.js"

/** The context the service's calls share, for `client` as `options` describe it. */
const serviceContext = (
  client: RedisClient,
  options: RedisOptions,
  commandClass: CommandClass | undefined
): ServiceContext => {
  const target = describeTarget(options)
  const loaded = new Set<string>()
  // A reconnect (possibly to a promoted replica) forgets which scripts the server has cached.
  client.on("ready", () => loaded.clear())
  return {
    client,
    isCluster: isClusterClient(client),
    target,
    commandTimeoutMs: options.commandTimeoutMs ?? configuredTimeout(client) ?? defaultCommandTimeoutMs,
    loadingWait: loadingWaiter(target, options.loadingTimeoutMs ?? defaultLoadingTimeoutMs),
    loaded,
    framed: framedEvalsha(client, commandClass)
  }
}

/**
 * Builds the service around an already-open client (the caller owns its lifetime). `outages` is
 * told once when the connection is lost and once when it is back (see watchOutages). With
 * ioredis's `Command` class, a single node's EVALSHAs go as prebuilt RESP bytes (framedEvalsha).
 */
export const makeRedisService = (
  client: RedisClient,
  options: RedisOptions,
  duplicate: Effect.Effect<RedisClient, RedisConnectionError, Scope.Scope>,
  outages?: OutageEvents,
  commandClass?: CommandClass
): RedisShape => {
  // ioredis is loaded by now (this client is one): undo what loading it did to String.prototype.
  restoreFastStringPrototype()
  const watcher = watchOutages(client, outages ?? { onLost: () => {}, onRestored: () => {} })
  const ctx = serviceContext(client, options, commandClass)
  const use = <A>(op: string, f: (c: RedisClient) => Promise<A>) =>
    Effect.tryPromise({
      try: () => whileLoading(() => bounded(ctx, f(client)), ctx.loadingWait),
      catch: (cause) => failure(ctx, op, cause)
    })
  const runPromise = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    runScriptPromise(ctx, name, keys, args, buffers)
  const run = (name: LuaName, keys: ReadonlyArray<string>, args: ReadonlyArray<ScriptArg>, buffers: boolean) =>
    Effect.tryPromise({ try: () => runScriptPromise(ctx, name, keys, args, buffers), catch: (e) => e as RedisError })
  const service: RedisShape = {
    client,
    isCluster: ctx.isCluster,
    target: ctx.target,
    use,
    script: (name, keys, args) => run(name, keys, args, false),
    scriptBuffer: (name, keys, args) => run(name, keys, args, true),
    scriptPromise: runPromise,
    scriptBatch: (calls, opts) => scriptBatch(ctx, calls, opts),
    command: (op, args) => use(op, (c) => c.call(String(args[0]), ...args.slice(1))),
    connectionState: watcher.state,
    duplicate
  }
  // A Cluster denies SORT's GET option ("GET option of SORT denied in Cluster mode", Redis 7.0): the lease keeps its script-only path there.
  return ctx.isCluster
    ? service
    : {
        ...service,
        scriptSorted: (name, keys, args, list, get) =>
          Effect.tryPromise({
            try: () => runScriptSortedPromise(ctx, name, keys, args, list, get),
            catch: (e) => e as RedisError
          })
      }
}
