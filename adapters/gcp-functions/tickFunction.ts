/**
 * Cloud Functions maintenance tick, for Cloud Scheduler: as an HTTP function (Scheduler → HTTP
 * target) or as a CloudEvent function (Scheduler → Pub/Sub topic → function).
 *
 *   functions.http("tick", createTickHttpFunction({ queues: ["default"], auth: { kind: "shared-secret", secret } }))
 *   functions.cloudEvent("tickEvent", createTickEventFunction({ queues: ["default"] }))
 */
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { type AuthConfig, checkAuthConfig } from "../shared/auth.js"
import { backendUnavailable, problemResponse } from "../shared/httpProblem.js"
import { refuseReplay } from "../shared/refuseReplay.js"
import type { MaintenanceConfig, TickSummary } from "../../src/processor/maintenance.js"
import { type TickStayOption, tickWithStay } from "../shared/tickStay.js"
import { makeBrokerRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import {
  authenticate,
  type GcfCloudEvent,
  type GcfRequest,
  type GcfResponse,
  requirePost,
  sendJson,
  sendResponse
} from "./types.js"

/** Settings of the tick functions: the maintenance tick's settings and where Redis is (and, for the HTTP form, the request check). */
export interface TickFunctionConfig extends MaintenanceConfig, TickStayOption {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
  /** Where the summary line goes (default console.log). */
  readonly log?: (line: string) => void
}

const json = { "content-type": "application/json" }
const logLine = (config: TickFunctionConfig, summary: TickSummary) =>
  (config.log ?? ((l: string) => console.log(l)))(JSON.stringify({ msg: "effect-asynq maintenance tick", ...summary }))

/** The maintenance tick as a Cloud Functions HTTP function (Cloud Scheduler calling it over HTTP). */
export interface TickHttpFunction {
  /** Checks the request, runs one maintenance tick and answers with its summary as JSON (500 when a step failed). */
  (req: GcfRequest, res: GcfResponse): Promise<void>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** HTTP tick: 200 + summary, 500 + summary when a step failed, 401 without valid credentials. */
export const createTickHttpFunction = (
  config: TickFunctionConfig & { readonly auth: AuthConfig }
): TickHttpFunction => {
  checkAuthConfig(config.auth, "tick function")
  const runtime = makeBrokerRuntime(config.redis)
  const fn = async (req: GcfRequest, res: GcfResponse) => {
    if (!requirePost(req, res)) return
    const caller = await authenticate(config.auth, req, res)
    if (caller === undefined) return
    try {
      const outcome = await runtime.run(
        refuseReplay(caller.signature).pipe(
          Effect.andThen(tickWithStay(config)),
          Effect.map((summary) => ({ summary })),
          Effect.catchTag("HttpProblem", (p) => Effect.succeed({ refused: problemResponse(p) }))
        )
      )
      if ("refused" in outcome) return sendResponse(res, outcome.refused)
      logLine(config, outcome.summary)
      sendJson(res, outcome.summary.errors.length > 0 ? 500 : 200, json, JSON.stringify(outcome.summary))
    } catch (e) {
      sendResponse(res, backendUnavailable("tick", e))
    }
  }
  return Object.assign(fn, { runtime })
}

/** The maintenance tick as a CloudEvent function (Cloud Scheduler publishing to Pub/Sub). */
export interface TickEventFunction {
  /** Runs one maintenance tick and resolves with its summary; rejects when a step failed. */
  (event: GcfCloudEvent): Promise<TickSummary>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** CloudEvent tick (e.g. Pub/Sub messages from Cloud Scheduler). Throws when a step failed, so the event is retried. */
export const createTickEventFunction = (config: TickFunctionConfig): TickEventFunction => {
  const runtime = makeBrokerRuntime(config.redis)
  const fn = async (_event: GcfCloudEvent) => {
    const summary = await runtime.run(tickWithStay(config))
    logLine(config, summary)
    if (summary.errors.length > 0)
      throw new Error(`maintenance tick: ${summary.errors.map((e) => `${e.step}: ${e.message}`).join("; ")}`)
    return summary
  }
  return Object.assign(fn, { runtime })
}
