/**
 * AWS Lambda dispatcher (EventBridge schedule): reads queue depths and starts processor
 * invocations (InvocationType "Event") for the backlog, up to a concurrency cap.
 */
import { LambdaClient, type LambdaClientConfig } from "@aws-sdk/client-lambda"
import type { Broker } from "../../src/broker/Broker.js"
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

export const createDispatcherHandler = (config: DispatcherHandlerConfig): DispatcherHandler => {
  const runtime = makeBrokerRuntime(config.redis)
  let lambda: LambdaClient | undefined = config.lambda instanceof LambdaClient ? config.lambda : undefined
  const handler = (_event?: unknown) => {
    lambda ??= new LambdaClient(config.lambda instanceof LambdaClient ? {} : (config.lambda ?? {}))
    return runtime.run(dispatch(config, lambda))
  }
  return Object.assign(handler, { runtime })
}
