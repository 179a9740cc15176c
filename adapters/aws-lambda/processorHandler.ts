/**
 * AWS Lambda processor drain (invoked by the dispatcher, or on a schedule): processes tasks until
 * the queues are empty or the remaining time falls under the safety margin, then returns a summary.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { drain, type DrainConfig, type DrainSummary } from "../../src/processor/drain.js"
import { makeBrokerRuntime, type WarmRuntime } from "../shared/warmRuntime.js"
import type { LambdaContext } from "./types.js"

export interface ProcessorHandlerConfig extends DrainConfig {
  readonly redis?: RedisOptions
}

export interface ProcessorHandler {
  (event: unknown, context: LambdaContext): Promise<DrainSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

export const createProcessorHandler = (config: ProcessorHandlerConfig): ProcessorHandler => {
  const runtime = makeBrokerRuntime(config.redis)
  const handler = (_event: unknown, context: LambdaContext) =>
    runtime.run(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        return yield* drain(config, now + context.getRemainingTimeInMillis())
      })
    )
  return Object.assign(handler, { runtime })
}
