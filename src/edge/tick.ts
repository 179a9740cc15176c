/**
 * The maintenance tick from an edge runtime (a Cloudflare Workers `scheduled` handler, a Vercel
 * cron route): one bounded pass of forward, recover, aggregate and janitor over the given queues —
 * the same `maintenanceTick` the Lambda and Cloud Functions adapters run, over HTTP. No server
 * anywhere: overlapping ticks are safe (every move is one atomic script).
 *
 * `extra` work (any Effect step needing only the Broker) runs in the same tick, e.g. the scheduler
 * tick for periodic tasks: `extra: schedulerTick({ entries })` with `scripts: schedulerScripts`
 * (the Lua sources `extra` runs; the maintenance scripts are always there). The scheduler is not
 * built in, so a bundle without periodic tasks does not carry the cron parser.
 */
import { maintenanceTick, type MaintenanceConfig, type TickSummary } from "../processor/maintenance.js"
import { edgeRunner } from "./context.js"
import type { HttpRedisOptions, ScriptSources } from "../redis/httpRedis.js"
import { maintenanceScripts } from "./scripts.js"

export type { TickSummary }

/** Options of the edge `createTick`: the maintenance tick's settings, the REST Redis and the scripts it may run. */
export interface EdgeTickConfig extends MaintenanceConfig {
  /** The REST endpoint (as for createClient). */
  readonly redis: HttpRedisOptions
  /** Lua sources of the scripts `extra` runs, if any (e.g. `schedulerScripts`). */
  readonly scripts?: ScriptSources
}

/** Runs one tick; resolves with what it did (failed parts are listed in `errors`, never thrown). Rejects only with RedisConnectionError for an unusable url/token. */
export type EdgeTick = () => Promise<TickSummary>

/** A tick function over HTTP (see the module comment). */
export const createTick = (config: EdgeTickConfig): EdgeTick => {
  const { redis, scripts, ...maintenance } = config
  const run = edgeRunner(redis, scripts ? { ...maintenanceScripts, ...scripts } : maintenanceScripts)
  return () => run(maintenanceTick(maintenance))
}
