/**
 * AWS Lambda processor drain (invoked by the dispatcher, or on a schedule): processes tasks until
 * the queues are empty or the remaining time falls under the safety margin, then returns a summary.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { drain, type DrainConfig, type DrainSummary } from "../../src/processor/drain.js"
import { invocationBudget, makeBrokerRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import type { LambdaContext } from "./types.js"

export interface ProcessorHandlerConfig extends DrainConfig {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
}

export interface ProcessorHandler {
  (event: unknown, context: LambdaContext): Promise<DrainSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

export const createProcessorHandler = (config: ProcessorHandlerConfig): ProcessorHandler => {
  const runtime = makeBrokerRuntime(config.redis)
  const margin = config.safetyMarginMs ?? 10_000
  const handler = (_event: unknown, context: LambdaContext) => {
    const remainingMs = context.getRemainingTimeInMillis()
    return runtime.run(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        return yield* drain(config, now + remainingMs)
      }),
      // The drain returns by its hard stop, or once outcomes are given up (a quarter of the margin
      // before the deadline); connecting to a Redis that does not answer, or a step that hangs past
      // that, ends the invocation here (an eighth of the margin before the deadline) instead.
      { budgetMs: invocationBudget(remainingMs, margin / 8) }
    )
  }
  return Object.assign(handler, { runtime })
}
