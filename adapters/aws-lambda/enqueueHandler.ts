/**
 * AWS Lambda enqueue endpoint (API Gateway HTTP API v2 or function URL). Imports only the
 * enqueue path: deep `effect/*` imports, no AWS SDK, no processor.
 *
 *   export const handler = createEnqueueHandler({ auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET! } })
 */
import type { Broker } from "../../src/broker/Broker.js"
import type { Redis } from "../../src/redis/Redis.js"
import { type EnqueueEndpointConfig, handleEnqueueRequest } from "../shared/enqueueEndpoint.js"
import {
  invocationBudget,
  lightBrokerLayer,
  makeWarmRuntime,
  type RedisSource,
  type WarmRuntime
} from "../shared/warmRuntime.js"
import type { HttpApiEvent, HttpApiResult, LambdaContext } from "./types.js"
import { checkAuthConfig, pathOnly } from "../shared/auth.js"

/** Signs a request (method, path, body) for an endpoint with `auth: { kind: "hmac" }` (the `x-asynq-signature` value). */
export { signBody } from "../shared/auth.js"

export interface EnqueueHandlerConfig extends EnqueueEndpointConfig {
  /**
   * Redis: connection options for a single node (default: REDIS_URL, else redis://127.0.0.1:6379;
   * command timeout 2000 ms unless `commandTimeoutMs` is set), served by a small RESP client of
   * ours instead of ioredis (a lighter bundle and cold start); an open ioredis client; or a Layer
   * providing Redis — e.g. `Redis.layer({ cluster })` for Redis Cluster or Sentinel, which need ioredis.
   */
  readonly redis?: RedisSource
}

/** The HTTP enqueue endpoint as a Lambda handler (function URL or API Gateway HTTP API, payload v2), made by `createEnqueueHandler`. */
export interface EnqueueHandler {
  /** Checks the request (method, size, credentials, body, allow-lists) before touching Redis, enqueues the task and answers with its TaskInfo as JSON, or with `{ error: { code, message } }`. */
  (event: HttpApiEvent, context?: LambdaContext): Promise<HttpApiResult>
  /** The container's services (one Redis connection reused by warm invocations). */
  readonly runtime: WarmRuntime<Broker | Redis>
}

/** Makes the enqueue endpoint's Lambda handler. Throws `InvalidArgument` at once (at cold start) when the settings are unusable, e.g. an empty secret. Create it at module scope: warm invocations reuse its Redis connection. */
export const createEnqueueHandler = (config: EnqueueHandlerConfig): EnqueueHandler => {
  checkAuthConfig(config.auth, "enqueue handler")
  const runtime = makeWarmRuntime(lightBrokerLayer(config.redis))
  const handler = async (event: HttpApiEvent, context?: LambdaContext): Promise<HttpApiResult> => {
    const raw = event.body ?? ""
    // The signature covers the bytes sent: a base64 body is decoded to bytes, never to text first.
    const body = event.isBase64Encoded ? Buffer.from(raw, "base64") : Buffer.from(raw, "utf8")
    const req = {
      method: event.requestContext?.http?.method ?? "POST",
      path: pathOnly(event.rawPath ?? "/"),
      headers: event.headers ?? {},
      body
    }
    // Connecting and enqueueing get the invocation's remaining time less a reserve: a stalled Redis
    // answers 503 before Lambda kills the function.
    const budgetMs = context === undefined ? undefined : invocationBudget(context.getRemainingTimeInMillis())
    const res = await handleEnqueueRequest(config, runtime, req, budgetMs)
    return { statusCode: res.status, headers: res.headers, body: res.body }
  }
  return Object.assign(handler, { runtime })
}
