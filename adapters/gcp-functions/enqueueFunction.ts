/**
 * Cloud Functions (Functions Framework) enqueue endpoint, an HTTP function:
 *
 *   import * as functions from "@google-cloud/functions-framework"
 *   functions.http("enqueue", createEnqueueFunction({ auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET! } }))
 */
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { type EnqueueEndpointConfig, handleEnqueueRequest } from "../shared/enqueueEndpoint.js"
import { makeBrokerRuntime, type RedisSource, type WarmRuntime } from "../shared/warmRuntime.js"
import { flatHeaders, type GcfRequest, type GcfResponse, readRawBody, requestPath, sendJson } from "./types.js"
import { checkAuthConfig } from "../shared/auth.js"

export interface EnqueueFunctionConfig extends EnqueueEndpointConfig {
  /** Redis options (command timeout 2000 ms unless set), an open ioredis client, or a Layer providing Redis. */
  readonly redis?: RedisSource
}

/** The HTTP enqueue endpoint as a Cloud Functions HTTP function (made by `createEnqueueFunction`). */
export interface EnqueueFunction {
  /** Checks the request before touching Redis, enqueues the task and answers with its TaskInfo as JSON, or with `{ error: { code, message } }`. */
  (req: GcfRequest, res: GcfResponse): Promise<void>
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** Makes the enqueue endpoint's HTTP function. Throws `InvalidArgument` at once when the settings are unusable, e.g. an empty secret. */
export const createEnqueueFunction = (config: EnqueueFunctionConfig): EnqueueFunction => {
  checkAuthConfig(config.auth, "enqueue function")
  const runtime = makeBrokerRuntime(config.redis)
  const fn = async (req: GcfRequest, res: GcfResponse): Promise<void> => {
    const body = await readRawBody(req, config.maxBodyBytes ?? 1024 * 1024)
    const out = await handleEnqueueRequest(config, runtime, {
      method: req.method,
      path: requestPath(req),
      headers: flatHeaders(req.headers),
      body
    })
    sendJson(res, out.status, out.headers, out.body)
  }
  return Object.assign(fn, { runtime })
}
