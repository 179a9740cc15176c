/**
 * AWS Lambda dispatcher (EventBridge schedule): reads queue depths and starts processor
 * invocations (InvocationType "Event") for the backlog, up to a concurrency cap.
 */
import type { LambdaClient, LambdaClientConfig } from "@aws-sdk/client-lambda"
import type { Broker } from "../../src/broker/Broker.js"
import { InvalidArgument } from "../../src/broker/errors.js"
import type { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { makeBrokerRuntime, type WarmRuntime } from "../shared/warmRuntime.js"
import { dispatch, type DispatchConfig, type DispatchSummary } from "./dispatch.js"
import { importLambdaSdk } from "./lambdaSdk.js"

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

/** A client has `send`; a LambdaClientConfig has none (duck-typed: the app's SDK copy may not be the one we would import). */
const isLambdaClient = (lambda: LambdaClient | LambdaClientConfig): lambda is LambdaClient =>
  typeof (lambda as { readonly send?: unknown }).send === "function"

/**
 * Without a client in `config.lambda`, @aws-sdk/client-lambda is imported and the client built as
 * the handler is created (during the cold start); when the package is not installed, every
 * invocation rejects with MissingPeerDependency saying so.
 */
export const createDispatcherHandler = (config: DispatcherHandlerConfig): DispatcherHandler => {
  checkDispatchConfig(config)
  const runtime = makeBrokerRuntime(config.redis)
  const given = config.lambda ?? {}
  const lambda: Promise<LambdaClient> = isLambdaClient(given)
    ? Promise.resolve(given)
    : importLambdaSdk("effect-asynq/aws-lambda/dispatcherHandler").then((sdk) => new sdk.LambdaClient(given))
  lambda.catch(() => undefined) // reported by each invocation, not as an unhandled rejection
  const handler = async (_event?: unknown) => runtime.run(dispatch(config, await lambda))
  return Object.assign(handler, { runtime })
}
