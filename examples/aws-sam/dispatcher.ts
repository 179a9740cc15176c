/**
 * Dispatcher: starts processor invocations for the backlog (every minute, and on enqueue). Throws
 * (an error in its metrics) when Invoke calls were throttled, timed out or refused.
 */
import { createDispatcherHandler } from "../../adapters/aws-lambda/dispatcherHandler.js"
import { redisUrl } from "./secrets.js"

export const handler = createDispatcherHandler({
  queues: ["email", "default"],
  processorFunctionName: process.env.PROCESSOR_FUNCTION!, // unset: InvalidArgument at cold start
  maxConcurrency: 20,
  tasksPerInvocation: 50,
  redis: await redisUrl()
})
