/**
 * ioredis, loaded only by the code paths that need it. The single-node paths of the Promise
 * client (`createClient`) and of the enqueue handler speak RESP themselves (lightRedis.ts); Redis
 * Cluster, Sentinel, an address only ioredis reads and ioredis-only options use ioredis, which is
 * then imported at run time. Nothing here imports ioredis statically, so a bundle or a process
 * that never takes such a path carries no ioredis (185 KB of a bundle, ~25 ms of a cold start).
 *
 * Two ways in:
 * - `bundledIoredis`: `import("ioredis")` as written: bundlers follow it, so a bundle of code that
 *   uses `Redis.layer` carries ioredis as before (it is evaluated only when first used).
 * - `runtimeIoredis`: the same import through a specifier bundlers do not follow, for the Promise
 *   client, whose Cluster/Sentinel path must not weigh on every single-node bundle: it resolves
 *   ioredis from node_modules at run time (it is a dependency of effect-asynq, so an installed
 *   package always has it). A single-file bundle without node_modules passes the module instead
 *   (`createClient({ cluster, ioredis })`), or fails with a RedisConnectionError saying so.
 */
import type * as Ioredis from "ioredis"
import * as Effect from "effect/Effect"
import { RedisConnectionError } from "./errors.js"

/** The parts of the ioredis module effect-asynq uses: `import * as ioredis from "ioredis"` is one. */
export type IoredisModule = Pick<typeof Ioredis, "Redis" | "Cluster" | "Command">

/** ioredis through an import bundlers follow (see the module comment). A function, so a bundle that never calls it drops it. */
export const bundledIoredis = (): Effect.Effect<IoredisModule> => Effect.promise(() => import("ioredis"))

/** The package name, in a variable: an import of it is left to run time by bundlers (esbuild, Rollup, webpack). */
const ioredisPackage = "ioredis"

/**
 * ioredis resolved at run time (see the module comment); `given` (a module the caller imported
 * itself) is used as is. Fails with a RedisConnectionError naming `target` when ioredis cannot be
 * loaded.
 */
export const runtimeIoredis = (
  target: string,
  given?: IoredisModule
): Effect.Effect<IoredisModule, RedisConnectionError> =>
  given !== undefined
    ? Effect.succeed(given)
    : Effect.tryPromise({
        try: () => import(/* @vite-ignore */ /* webpackIgnore: true */ ioredisPackage) as Promise<IoredisModule>,
        catch: (cause) =>
          new RedisConnectionError({
            target,
            message:
              `cannot connect to Redis at ${target}: these options need ioredis (Redis Cluster, Sentinel, a host:port or socket address, maxRetriesPerRequest), ` +
              `which is loaded at run time and could not be (${cause instanceof Error ? cause.message : String(cause)}). ` +
              `In a bundle without node_modules, import it and pass it: import * as ioredis from "ioredis"; createClient({ ...options, ioredis })`,
            cause
          })
      })
