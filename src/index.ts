/**
 * effect-asynq: a Redis task queue written with Effect, wire-compatible with asynq (Go).
 *
 * - `Redis`, `Broker`: the services every step runs over.
 * - the steps (enqueue, dequeueLease, complete, retry, archive, forward, recover, aggregate,
 *   janitor, …): composable Effects, each one atomic transition.
 * - `Server` and the processor types; `Scheduler`; the inspector; the wire format.
 * The Promise facades live in `effect-asynq/client`, `effect-asynq/worker`, `effect-asynq/inspector`
 * and `effect-asynq/scheduler`.
 */
export { Redis, acquireClient, makeRedis } from "./redis/Redis.js"
export type { BatchReply, RedisClient, RedisShape, ScriptArg, ScriptCall } from "./redis/Redis.js"
export type { RedisNode, RedisOptions } from "./redis/options.js"
export * from "./redis/errors.js"
export { Broker, type BrokerShape } from "./broker/Broker.js"
export * from "./broker/errors.js"
export * from "./wire/index.js"
export * from "./steps/index.js"
export * from "./processor/index.js"
export * from "./scheduler/index.js"
export * from "./inspector/index.js"
export { defineTask, type SchemaTaskDefinition, type TaskDefinition } from "./tasks/defineTask.js"
