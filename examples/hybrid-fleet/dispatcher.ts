/**
 * The Lambda part of a hybrid fleet: the dispatcher (every minute, and on enqueue) invokes the
 * processor (examples/aws-sam/processor.ts, serving the same queues) only past the spillover thresholds.
 */
import { createDispatcherHandler } from "../../adapters/aws-lambda/dispatcherHandler.js"
import { fleetQueues, spilloverAbove } from "./fleet.js"

export const handler = createDispatcherHandler({
  queues: fleetQueues,
  processorFunctionName: process.env.PROCESSOR_FUNCTION!,
  spilloverAbove,
  tasksPerInvocation: 50,
  maxConcurrency: 10
})
