/**
 * `effect-asynq/edge/scheduler`: periodic tasks from an edge runtime. Pass the scheduler tick as
 * the maintenance tick's `extra`, with its scripts:
 *
 *   createTick({ redis, queues, extra: schedulerTick({ entries }), scripts: schedulerScripts })
 *
 * Kept out of `effect-asynq/edge` because the cron parser (cron-parser and luxon, ~100 KB
 * minified) would be in every bundle, and because cron-parser imports `fs` for its file parser:
 * bundle with a resolver that honours its package.json "browser" field, which maps `fs` to
 * nothing (esbuild `--platform=browser`; the test bundles it that way for workerd).
 */
export { schedulerTick, type SchedulerTickOptions, type SchedulerTickSummary } from "../scheduler/tick.js"
export type { EntryConfig } from "../scheduler/entry.js"
export { schedulerScripts } from "./scripts.js"
