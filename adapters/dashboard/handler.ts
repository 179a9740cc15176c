/**
 * The dashboard as a web-standard handler: `(request: Request) => Promise<Response>`, to mount in
 * a Node server (see nodeServer.ts), run as a Lambda function URL, or call from any framework that
 * speaks Request/Response. Pages and assets need no Redis; the API and /metrics read it through the
 * inspector on a connection opened on the first call.
 */
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import type * as Layer from "effect/Layer"
import type { Redis, RedisClient } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { makeBrokerRuntime, makePromiseRuntime } from "../../src/runtime/promiseRuntime.js"
import { brokerLayerOfLayerOrClient } from "../shared/warmRuntime.js"
import { findRoute, json } from "./api.js"
import { assetResponse, pageResponse } from "./pages.js"
import { makeTokenCheck } from "./auth.js"

export interface DashboardOptions {
  /**
   * The Redis to inspect: a URL or connection options (default: REDIS_URL, then
   * redis://127.0.0.1:6379), an open ioredis client the application owns (used as is, never closed
   * by the dashboard), or a Layer providing the Redis service (e.g. `Redis.layer({ cluster })`).
   */
  readonly redis?: RedisOptions | string | RedisClient | Layer.Layer<Redis, unknown>
  /** Allow the actions (run, archive, delete, cancel, pause/resume, bulk). Default false: read-only. */
  readonly allowActions?: boolean
  /** When set, every request must carry this token (Bearer header, cookie, or `?token=`; see README). */
  readonly token?: string
  /** The path the dashboard is mounted under, e.g. "/dash" (default: the root). */
  readonly basePath?: string
}

/** A configured dashboard: the request handler, and `close()` for its Redis connection. */
export interface DashboardHandler {
  (request: Request): Promise<Response>
  /** Closes the Redis connection the handler opened (if any); the handler must not be used afterwards. */
  readonly close: () => Promise<void>
}

/** What the request-level logic needs to know (also used by `handleDashboardRequest`). */
export interface DashboardConfig {
  readonly allowActions: boolean
  readonly basePath: string
}

const errorStatus: Record<string, number> = {
  QueueNotFound: 404,
  TaskNotFound: 404,
  InvalidArgument: 400,
  NotACluster: 400,
  InvalidState: 409,
  QueueNotEmpty: 409,
  RedisError: 503,
  RedisConnectionError: 503
}

/** A failed API call as `{ error: { code, message } }` with a fitting status. */
export const errorResponse = (e: unknown): Response => {
  const tag = typeof e === "object" && e !== null && "_tag" in e ? String((e as { _tag: unknown })._tag) : "InternalError"
  const message = e instanceof Error || (typeof e === "object" && e !== null && "message" in e) ? String((e as { message: unknown }).message) : String(e)
  return json({ error: { code: tag, message } }, errorStatus[tag] ?? 500)
}

const readOnlyRefusal = () =>
  json(
    {
      error: {
        code: "ActionsDisabled",
        message: "this dashboard is read-only: actions (run, archive, delete, cancel, pause) are refused; start it with --allow-actions (or allowActions: true) to allow them"
      }
    },
    403
  )

/** Normalises a base path: "" for the root, else "/x" without a trailing slash. */
export const normaliseBasePath = (p: string | undefined): string => {
  if (p === undefined || p === "" || p === "/") return ""
  return ("/" + p.replace(/^\/+|\/+$/g, "")).replace(/\/{2,}/g, "/")
}

/**
 * One API request (a path below the base path, starting with /api or equal to /metrics) as an
 * Effect over Broker: routed, actions refused unless allowed, failures turned into JSON errors.
 * Authentication is not checked here (createDashboardHandler does that first).
 */
export const handleApiRequest = (request: Request, path: string, url: URL, config: DashboardConfig): Effect.Effect<Response, never, Broker> => {
  const found = findRoute(request.method, path)
  if (found === undefined) return Effect.succeed(json({ error: { code: "NotFound", message: `no API route ${request.method} ${path}` } }, 404))
  if (!("route" in found))
    return Effect.succeed(
      new Response(JSON.stringify({ error: { code: "MethodNotAllowed", message: `${request.method} is not allowed on ${path}; use ${found.allowed.join(" or ")}` } }), {
        status: 405,
        headers: { "content-type": "application/json; charset=utf-8", allow: found.allowed.join(", ") }
      })
    )
  const { route, params } = found
  if (route.action && !config.allowActions) return Effect.succeed(readOnlyRefusal())
  for (const p of params) {
    try {
      decodeURIComponent(p)
    } catch {
      return Effect.succeed(json({ error: { code: "InvalidArgument", message: `the path has a malformed %-escape: ${p}` } }, 400))
    }
  }
  return route.handle({ params, url, request }).pipe(Effect.catch((e) => Effect.succeed(errorResponse(e))))
}

/** A state-changing request sent from another site's page (its Origin is not this host): refused. */
const crossSite = (request: Request, url: URL): boolean => {
  if (request.method === "GET" || request.method === "HEAD") return false
  const origin = request.headers.get("origin")
  if (origin === null) return false
  try {
    return new URL(origin).host !== (request.headers.get("host") ?? url.host)
  } catch {
    return true
  }
}

/**
 * The dashboard handler: pages at `<basePath>/`, assets at `<basePath>/assets/…`, the JSON API at
 * `<basePath>/api/…` and Prometheus text at `<basePath>/metrics`. Read-only unless `allowActions`.
 */
export const createDashboardHandler = (options: DashboardOptions = {}): DashboardHandler => {
  const basePath = normaliseBasePath(options.basePath)
  const config: DashboardConfig = { allowActions: options.allowActions === true, basePath }
  if (options.token !== undefined && options.token.trim() === "") throw new TypeError("createDashboardHandler: token is empty; pass a non-empty token or leave it out")
  const checkToken = makeTokenCheck(options.token, `${basePath}/`)
  const given = brokerLayerOfLayerOrClient(options.redis)
  const runtime = given ? makePromiseRuntime(given) : makeBrokerRuntime(options.redis as RedisOptions | string | undefined)

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    if (basePath !== "" && url.pathname === basePath) return new Response(null, { status: 308, headers: { location: `${basePath}/${url.search}` } })
    if (basePath !== "" && !url.pathname.startsWith(`${basePath}/`)) return json({ error: { code: "NotFound", message: `not under ${basePath}/` } }, 404)
    const path = url.pathname.slice(basePath.length) || "/"
    const isApi = path === "/metrics" || path === "/api" || path.startsWith("/api/")
    const auth = checkToken(request, url)
    if (!auth.ok) {
      if (isApi) {
        return new Response(JSON.stringify({ error: { code: "Unauthorized", message: "this dashboard needs a token: send Authorization: Bearer <token>" } }), {
          status: 401,
          headers: { "content-type": "application/json; charset=utf-8", "www-authenticate": 'Bearer realm="effect-asynq dash"' }
        })
      }
      return pageResponse("login", config, 401)
    }
    if (auth.via === "query" && !isApi && (request.method === "GET" || request.method === "HEAD")) {
      // Keep the token out of the address bar: set the cookie and come back without it.
      url.searchParams.delete("token")
      return new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}${url.hash}`, "set-cookie": auth.setCookie } })
    }
    if (crossSite(request, url)) return json({ error: { code: "CrossSiteRequest", message: "refused: the request comes from another site's page (its Origin is not this dashboard)" } }, 403)
    if (!isApi) {
      if (path.startsWith("/assets/")) return assetResponse(path.slice("/assets/".length))
      if (request.method !== "GET" && request.method !== "HEAD") return json({ error: { code: "MethodNotAllowed", message: `${request.method} is not allowed on ${path}` } }, 405)
      if (path === "/") return pageResponse("app", config, 200)
      return json({ error: { code: "NotFound", message: `nothing at ${path}; the dashboard is at ${basePath}/` } }, 404)
    }
    try {
      return await runtime.run(handleApiRequest(request, path, url, config))
    } catch (e) {
      // The connection could not be opened (the next request tries again).
      return errorResponse(e)
    }
  }
  return Object.assign(handle, { close: () => runtime.close() })
}
