/**
 * The processor's public surface (re-exported by `effect-asynq/worker`): handlers, the mux,
 * middleware, the task and its context, the processor's errors, and its three modes: the long-lived
 * `Server`, the time-boxed `drain` and the `maintenanceTick`.
 */
export * as Server from "./Server.js"
export type { ServerHandle } from "./Server.js"
export {
  applyMiddleware,
  asyncMiddleware,
  type Handler,
  type HandlerFn,
  type HandlerResult,
  type Middleware,
  toHandler
} from "./Handler.js"
export { handlerOf, type HandlerInput, ServeMux } from "./Mux.js"
export { type PayloadHandlerFn, payloadHandler } from "./payloadHandler.js"
export { makeTask, type ResultWriter, type Task } from "./Task.js"
export * from "./TaskContext.js"
export {
  HandlerNotFound,
  isRevokeTask,
  isSkipRetry,
  RateLimited,
  type RateLimitedOptions,
  RevokeTask,
  SkipRetry,
  TaskCanceled,
  TaskDeadlineExceeded,
  TaskStopped
} from "./errors.js"
export type { AggregatedTask, GroupAggregator, RetryDelayFn, ServerOptions } from "./options.js"
export type { Settled } from "./settle.js"
export { drain, type DrainConfig, type DrainSummary } from "./drain.js"
export { maintenanceTick, type MaintenanceConfig, type TickSummary } from "./maintenance.js"
export type { AggregateSummary, AggregationConfig } from "./aggregator.js"
