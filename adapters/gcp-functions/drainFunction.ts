/**
 * Cloud Functions processor drain, an HTTP function (call it from Cloud Scheduler or Cloud Tasks).
 * Cloud Functions pass no remaining-time value: give the function's configured timeout, and the
 * drain stops taking tasks `safetyMarginMs` before it runs out.
 *
 *   functions.http("drain", createDrainFunction({ queues: ["default"], handler, timeoutMs: 540_000, auth }))
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { type AuthConfig, checkAuthConfig, verifyAuth } from "../shared/auth.js"
import { drain, type DrainConfig } from "../../src/processor/drain.js"
import { makeBrokerRuntime, type WarmRuntime } from "../shared/warmRuntime.js"
import { checkAuth, flatHeaders, type GcfRequest, type GcfResponse, sendJson } from "./types.js"

export interface DrainFunctionConfig extends DrainConfig {
  readonly auth: AuthConfig
  /** The function's configured timeout (Cloud Functions default 60 000 ms). */
  readonly timeoutMs: number
  readonly redis?: RedisOptions
}

export interface DrainFunction {
  (req: GcfRequest, res: GcfResponse): Promise<void>
  readonly runtime: WarmRuntime<Broker | Redis>
}

const json = { "content-type": "application/json" }

export const createDrainFunction = (config: DrainFunctionConfig): DrainFunction => {
  checkAuthConfig(config.auth, "drain function")
  const runtime = makeBrokerRuntime(config.redis)
  const fn = async (req: GcfRequest, res: GcfResponse) => {
    const body = req.rawBody?.toString("utf8") ?? ""
    if (!(await checkAuth(() => Effect.runPromise(verifyAuth(config.auth, flatHeaders(req.headers), body)), res))) return
    try {
      const summary = await runtime.run(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          return yield* drain(config, now + config.timeoutMs)
        })
      )
      sendJson(res, 200, json, JSON.stringify(summary))
    } catch (e) {
      sendJson(res, 503, json, JSON.stringify({ error: { code: "redis_unavailable", message: e instanceof Error ? e.message : String(e) } }))
    }
  }
  return Object.assign(fn, { runtime })
}
