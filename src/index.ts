/**
 * effect-asynq: a Redis task queue written with Effect, wire-compatible with asynq (Go).
 *
 * The root module is the Effect API, kept small (the README's "API" section lists every name):
 * - namespaces: `Steps` (the queue operations), `Server` (the long-lived worker), `Inspector`,
 *   `Scheduler`, `Wire` (asynq's wire format);
 * - the services every step runs over: `Redis`, `Broker`;
 * - entry points: `ServeMux`, `TaskContext`, `defineTask`, `drain`, `maintenanceTick`;
 * - every tagged error.
 * The Promise facades live in `effect-asynq/client`, `effect-asynq/worker`, `effect-asynq/inspector`
 * and `effect-asynq/scheduler`.
 */
export * as Steps from "./steps/index.js"
/** The long-lived worker (asynq's Server): `Server.start` (scoped), `Server.serve` (until interrupted) and `Server.layer`. */
export * as Server from "./processor/Server.js"
export * as Inspector from "./inspector/index.js"
export * as Scheduler from "./scheduler/index.js"
export * as Wire from "./wire/index.js"

export { Redis } from "./redis/Redis.js"
export type { RedisShape } from "./redis/Redis.js"
export type { RedisNode, RedisOptions } from "./redis/options.js"
export { Broker, type BrokerShape } from "./broker/Broker.js"

export { ServeMux, type HandlerInput } from "./processor/Mux.js"
export type { Handler, HandlerFn, Middleware } from "./processor/Handler.js"
export type { Task, ResultWriter } from "./processor/Task.js"
export { TaskContext } from "./processor/TaskContext.js"
export type { ServerHandle } from "./processor/Server.js"
export type { AggregatedTask, GroupAggregator, RetryDelayFn, ServerOptions } from "./processor/options.js"
export type { Settled } from "./processor/settle.js"
export { drain, type DrainConfig, type DrainSummary } from "./processor/drain.js"
export { maintenanceTick, type MaintenanceConfig, type TickSummary } from "./processor/maintenance.js"
export type { AggregateSummary, AggregationConfig } from "./processor/aggregator.js"
export { defineTask, type SchemaTaskDefinition, type TaskDefinition } from "./tasks/defineTask.js"
export type { EnqueueOptions } from "./steps/options.js"
export type { TaskInfo } from "./steps/taskInfo.js"
export type { TaskMessage } from "./wire/TaskMessage.js"

// Errors
export { RedisConnectionError, RedisError } from "./redis/errors.js"
export {
  DuplicateTask,
  InvalidArgument,
  InvalidState,
  LeaseLost,
  NotACluster,
  QueueNotEmpty,
  QueueNotFound,
  TaskIdConflict,
  TaskNotFound
} from "./broker/errors.js"
export { MessageDecodeError } from "./wire/errors.js"
export { PayloadDecodeError, PayloadEncodeError } from "./wire/payload.js"
export {
  HandlerNotFound,
  RevokeTask,
  SkipRetry,
  TaskCanceled,
  TaskDeadlineExceeded,
  TaskStopped
} from "./processor/errors.js"
export {
  ConfigProviderError,
  DuplicateEntry,
  EntryNotFound,
  InvalidCronSpec,
  InvalidTimeZone
} from "./scheduler/errors.js"
export { SchedulerNotRunning } from "./scheduler/promise.js"
export { RuntimeClosed } from "./runtime/promiseRuntime.js"
