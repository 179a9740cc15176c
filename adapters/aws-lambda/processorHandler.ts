/**
 * AWS Lambda processor drain (invoked by the dispatcher, or on a schedule): processes tasks until
 * the queues are empty or the remaining time falls under the safety margin, then returns a summary
 * (also when Redis fails or stops answering midway: `stoppedBecause: "redis-unavailable"`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { drain, type DrainConfig, drainMarginMs, type DrainSummary } from "../../src/processor/drain.js"
import {
  brokerLayer,
  invocationBudget,
  makeWarmRuntime,
  type RedisSource,
  type WarmRuntime
} from "../shared/warmRuntime.js"
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
  const runtime = makeWarmRuntime(
    telemetry ? brokerLayer(config.redis).pipe(Layer.provideMerge(telemetry)) : brokerLayer(config.redis)
  )
  const handler = (_event: unknown, context: LambdaContext) => {
    const remainingMs = context.getRemainingTimeInMillis()
    // The margin scales with the time this invocation has (a quarter of it, 500 ms to 10 s) unless
    // one is configured: under Lambda's default 3 s timeout the drain has 2.25 s to take tasks.
    const margin = drainMarginMs(config, remainingMs)
    return runtime.run(
      withTelemetryFlush(
        telemetry !== undefined,
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          return yield* drain({ ...config, safetyMarginMs: margin }, now + remainingMs)
        })
      ),
      // The drain returns its summary by itself: at the end of its work, or an eighth of the margin
      // before the deadline when Redis stopped answering (stoppedBecause "redis-unavailable").
      // Connecting to a Redis that does not answer ends the invocation here instead (InvocationTimeout,
      // a sixteenth of the margin before the deadline).
      { budgetMs: invocationBudget(remainingMs, margin / 16) }
    )
  }
  return Object.assign(handler, { runtime })
}
