/**
 * AWS Lambda dispatcher (EventBridge schedule): reads queue depths and starts processor
 * invocations (InvocationType "Event") for the backlog, up to a concurrency cap.
 */
import { LambdaClient, type LambdaClientConfig } from "@aws-sdk/client-lambda"
import type { Broker } from "../../src/broker/Broker.js"
import { InvalidArgument } from "../../src/broker/errors.js"
import type { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { makeBrokerRuntime, type WarmRuntime } from "../shared/warmRuntime.js"
import { dispatch, type DispatchConfig, type DispatchSummary } from "./dispatch.js"

export interface DispatcherHandlerConfig extends DispatchConfig {
  readonly redis?: RedisOptions
  /** A Lambda client, or the config to build one (default: region and credentials from the environment). */
  readonly lambda?: LambdaClient | LambdaClientConfig
}

export interface DispatcherHandler {
  (event?: unknown): Promise<DispatchSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** A misconfigured dispatcher fails when created (at cold start), not on every schedule tick. */
const checkDispatchConfig = (config: DispatchConfig): void => {
  const fail = (field: string, problem: string) => {
    throw new InvalidArgument({ field, message: `dispatcher: ${problem}` })
  }
  if (typeof config.processorFunctionName !== "string" || config.processorFunctionName.trim() === "")
    fail("processorFunctionName", "processorFunctionName is empty; set it to the processor function's name or ARN (is its environment variable defined?)")
  if (!Array.isArray(config.queues) || config.queues.length === 0) fail("queues", "queues must list at least one queue")
  for (const field of ["maxConcurrency", "tasksPerInvocation"] as const) {
    const v = config[field]
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) fail(field, `${field} must be a whole number >= 1, got ${v}`)
  }
}

export const createDispatcherHandler = (config: DispatcherHandlerConfig): DispatcherHandler => {
  checkDispatchConfig(config)
  const runtime = makeBrokerRuntime(config.redis)
  let lambda: LambdaClient | undefined = config.lambda instanceof LambdaClient ? config.lambda : undefined
  const handler = (_event?: unknown) => {
    lambda ??= new LambdaClient(config.lambda instanceof LambdaClient ? {} : (config.lambda ?? {}))
    return runtime.run(dispatch(config, lambda))
  }
  return Object.assign(handler, { runtime })
}
