/**
 * Cloud Functions processor drain, an HTTP function (call it from Cloud Scheduler or Cloud Tasks).
 * Cloud Functions pass no remaining-time value: give the function's configured timeout, and the
 * drain stops taking tasks `safetyMarginMs` before it runs out.
 *
 *   functions.http("drain", createDrainFunction({ queues: ["default"], handler, timeoutMs: 540_000, auth }))
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { type AuthConfig, checkAuthConfig } from "../shared/auth.js"
import { backendUnavailable, problemResponse } from "../shared/httpProblem.js"
import { refuseReplay } from "../shared/refuseReplay.js"
import { drain, type DrainConfig, drainMarginMs } from "../../src/processor/drain.js"
import {
  brokerLayer,
  invocationBudget,
  makeWarmRuntime,
  type RedisSource,
  type WarmRuntime
} from "../shared/warmRuntime.js"
import { withTelemetryFlush } from "../shared/telemetry.js"
import { authenticate, type GcfRequest, type GcfResponse, requirePost, sendJson, sendResponse } from "./types.js"

/** Settings of `createDrainFunction`: the drain's settings, the function's timeout (Cloud Functions pass no remaining time), the request check and where Redis is. */
export interface DrainFunctionConfig extends DrainConfig {
  readonly auth: AuthConfig
  /** The function's configured timeout (Cloud Functions default 60 000 ms). */
  readonly timeoutMs: number
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
  /**
   * Telemetry for the invocations, e.g. `otlpLayer({ url })` from `effect-asynq/observability`:
   * each attempt is a span (and with `metrics: true` the worker metrics are recorded); what is
   * buffered is sent before the response.
   */
  readonly telemetry?: Layer.Layer<any>
}

/** The drain as a Cloud Functions HTTP function (made by `createDrainFunction`). */
export interface DrainFunction {
  /** Checks the request, runs tasks until the queues are empty or the time is nearly up, and answers with the drain's summary as JSON. */
  (req: GcfRequest, res: GcfResponse): Promise<void>
  readonly runtime: WarmRuntime<Broker | Redis>
}

const json = { "content-type": "application/json" }

/** Makes the drain's HTTP function. Register it with the Functions Framework (`functions.http(name, fn)`). */
export const createDrainFunction = (config: DrainFunctionConfig): DrainFunction => {
  checkAuthConfig(config.auth, "drain function")
  const telemetry = config.telemetry
  const runtime = makeWarmRuntime(
    telemetry ? brokerLayer(config.redis).pipe(Layer.provideMerge(telemetry)) : brokerLayer(config.redis)
  )
  // The margin (configured, else a quarter of the function's timeout, 500 ms to 10 s) and the
  // invocation's backstop budget (a sixteenth of it before the timeout; the drain returns before).
  const margin = drainMarginMs(config, config.timeoutMs)
  const drainConfig = { ...config, safetyMarginMs: margin }
  const fn = async (req: GcfRequest, res: GcfResponse) => {
    if (!requirePost(req, res)) return
    const caller = await authenticate(config.auth, req, res)
    if (caller === undefined) return
    try {
      const outcome = await runtime.run(
        Effect.gen(function* () {
          yield* refuseReplay(caller.signature)
          const now = yield* Clock.currentTimeMillis
          return {
            summary: yield* withTelemetryFlush(telemetry !== undefined, drain(drainConfig, now + config.timeoutMs))
          }
        }).pipe(Effect.catchTag("HttpProblem", (p) => Effect.succeed({ refused: problemResponse(p) }))),
        { budgetMs: invocationBudget(config.timeoutMs, margin / 16) }
      )
      if ("refused" in outcome) return sendResponse(res, outcome.refused)
      // Redis failed midway: 503, with the summary of what was done.
      sendJson(
        res,
        outcome.summary.stoppedBecause === "redis-unavailable" ? 503 : 200,
        json,
        JSON.stringify(outcome.summary)
      )
    } catch (e) {
      sendResponse(res, backendUnavailable("drain", e))
    }
  }
  return Object.assign(fn, { runtime })
}
