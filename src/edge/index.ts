/**
 * `effect-asynq/edge`: enqueue and maintenance from any runtime with `fetch` (Cloudflare Workers,
 * Vercel Edge, Deno, Bun, Node), over a Redis that speaks HTTP (Upstash's REST protocol). No
 * `node:` import and no ioredis in this entry's import graph; the package is side-effect free, so
 * a bundle keeps only what it uses (an enqueue-only Worker: about 90 KB minified, 120 KB with the maintenance tick).
 */
// Promise API
export { createClient, type EdgeClient, type EnqueueOutcome } from "./client.js"
export { createTick, type EdgeTick, type EdgeTickConfig, type TickSummary } from "./tick.js"
export type { HttpRedisOptions, ScriptSources } from "../redis/httpRedis.js"
export { DuplicateTask, InvalidArgument, TaskIdConflict } from "../broker/errors.js"
export { CommandTimeout, isCommandTimeout, RedisConnectionError, RedisError } from "../redis/errors.js"
export { payloadJson, payloadText } from "../wire/payload.js"
export type { EnqueueError, EnqueueItem } from "../steps/enqueue.js"
export type { EnqueueOptions } from "../steps/options.js"
export type { TaskInfo } from "../steps/taskInfo.js"
export type { TaskDefinition } from "../steps/TaskDefinition.js"
// Loads effect's Schema only where a definition is made: a bundle that never calls defineTask drops it.
export { defineTask, type SchemaTaskDefinition } from "../tasks/defineTask.js"

// Effect API: the steps, unchanged, over the HTTP layer
export { httpRedisLayer, type HttpRedisLayerOptions } from "./layer.js"
export { enqueueScripts, maintenanceScripts } from "./scripts.js"
export { Broker } from "../broker/Broker.js"
export { enqueue, enqueueMany } from "../steps/enqueue.js"
export { forward } from "../steps/forward.js"
export { recover } from "../steps/recover.js"
export { janitor } from "../steps/janitor.js"
export { aggregate } from "../steps/aggregate.js"
export { maintenanceTick, type MaintenanceConfig } from "../processor/maintenance.js"
