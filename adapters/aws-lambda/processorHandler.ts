/**
 * AWS Lambda processor drain (invoked by the dispatcher, or on a schedule): processes tasks until
 * the queues are empty or the remaining time falls under the safety margin, then returns a summary.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { drain, type DrainConfig, type DrainSummary } from "../../src/processor/drain.js"
import { brokerLayer, invocationBudget, makeWarmRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import { withTelemetryFlush } from "../shared/telemetry.js"
import type { LambdaContext } from "./types.js"

/** Settings of `createProcessorHandler`: the drain's settings (queues, handlers, concurrency, safety margin, …) and where Redis is. */
export interface ProcessorHandlerConfig extends DrainConfig {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
  /**
   * Telemetry for the invocations, e.g. `otlpLayer({ url })` from `effect-asynq/observability`:
   * each attempt is a span (and with `metrics: true` the worker metrics are recorded); what is
   * buffered is sent before the invocation returns.
   */
  readonly telemetry?: Layer.Layer<any>
}

/** The Lambda handler that drains queues within the invocation's time (made by `createProcessorHandler`). */
export interface ProcessorHandler {
  /** Runs tasks until the queues are empty or the remaining time falls under the safety margin, and returns the drain's summary. */
  (event: unknown, context: LambdaContext): Promise<DrainSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** Makes the processor's Lambda handler. Create it at module scope: warm invocations reuse its Redis connection. */
export const createProcessorHandler = (config: ProcessorHandlerConfig): ProcessorHandler => {
  const telemetry = config.telemetry
  const runtime = makeWarmRuntime(telemetry ? brokerLayer(config.redis).pipe(Layer.provideMerge(telemetry)) : brokerLayer(config.redis))
  const margin = config.safetyMarginMs ?? 10_000
  const handler = (_event: unknown, context: LambdaContext) => {
    const remainingMs = context.getRemainingTimeInMillis()
    return runtime.run(
      withTelemetryFlush(
        telemetry !== undefined,
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          return yield* drain(config, now + remainingMs)
        })
      ),
      // The drain returns by its hard stop, or once outcomes are given up (a quarter of the margin
      // before the deadline); connecting to a Redis that does not answer, or a step that hangs past
      // that, ends the invocation here (an eighth of the margin before the deadline) instead.
      { budgetMs: invocationBudget(remainingMs, margin / 8) }
    )
  }
  return Object.assign(handler, { runtime })
}
