/** Dispatcher: starts processor invocations for the backlog (every minute). */
import { createDispatcherHandler } from "../../adapters/aws-lambda/dispatcherHandler.js"

export const handler = createDispatcherHandler({
  queues: ["email", "default"],
  processorFunctionName: process.env.PROCESSOR_FUNCTION!, // unset: InvalidArgument at cold start
  maxConcurrency: 20,
  tasksPerInvocation: 50
})
