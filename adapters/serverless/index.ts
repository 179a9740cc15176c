/**
 * effect-asynq/serverless: the building blocks the Lambda and Cloud Functions handlers are made
 * of, for a platform or a custom handler of your own: the time-boxed drain, the maintenance tick,
 * and the warm runtime (one Redis connection per container, socket unref'd between invocations,
 * every invocation bounded by its remaining time), plus the enqueue endpoint's request handling.
 *
 *   const runtime = makeWarmBrokerRuntime({ url: process.env.REDIS_URL })
 *   export const handler = (event, context) =>
 *     runtime.run(maintenanceTick({ queues: ["default"] }), { budgetMs: invocationBudget(context.getRemainingTimeInMillis()) })
 */
export {
  defaultSafetyMarginMs,
  drain,
  type DrainConfig,
  drainMarginMs,
  type DrainSummary
} from "../../src/processor/drain.js"
export { maintenanceTick, type MaintenanceConfig, type TickSummary } from "../../src/processor/maintenance.js"
export {
  brokerLayer as warmBrokerLayer,
  InvocationTimeout,
  invocationBudget,
  makeBrokerRuntime as makeWarmBrokerRuntime,
  makeWarmRuntime,
  type RedisSource,
  serverlessCommandTimeoutMs,
  type WarmRuntime
} from "../shared/warmRuntime.js"
export {
  checkEnqueueRequest,
  type EnqueueEndpointConfig,
  type EnqueueHttpRequest,
  enqueueAccepted,
  handleEnqueueRequest
} from "../shared/enqueueEndpoint.js"
