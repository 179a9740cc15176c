/**
 * The dashboard as a web-standard handler: `(request: Request) => Promise<Response>`, to mount in
 * a Node server (see nodeServer.ts), run as a Lambda function URL, or call from any framework that
 * speaks Request/Response. Pages and assets need no Redis; the API and /metrics read it through the
 * inspector on a connection opened on the first call.
 *
 * Every request passes, in order: the Host check (hosts.ts: refused with 421 unless the host is
 * localhost, an IP address, or allowed), the base path, the login form and its stylesheet (the only
 * things served without the token), the token (auth.ts), the cross-site check for state-changing
 * requests, then the page, an asset or the API (api.ts; actions refused unless allowed).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Broker } from "../../src/broker/Broker.js"
import type * as Layer from "effect/Layer"
import type { Redis, RedisClient } from "../../src/redis/Redis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { makeBrokerRuntime, makePromiseRuntime } from "../../src/runtime/promiseRuntime.js"
import { brokerLayerOfLayerOrClient } from "../shared/warmRuntime.js"
import { findRoute, json } from "./api.js"
import { assetResponse, appPage, loginPage } from "./pages.js"
import { carriesToken, makeTokenCheck, type TokenCheck } from "./auth.js"
import { makeFailedLogins } from "./failedLogins.js"
import { makeHostCheck, makeOriginCheck, parseAllowedHosts } from "./hosts.js"
import { isRedisUnavailable, redisAddressOf, redisUnavailableMessage } from "./redisDown.js"

export interface DashboardOptions {
  /**
   * The Redis to inspect: a URL or connection options (default: REDIS_URL, then
   * redis://127.0.0.1:6379), an open ioredis client the application owns (used as is, never closed
   * by the dashboard), or a Layer providing the Redis service (e.g. `Redis.layer({ cluster })`).
   */
  readonly redis?: RedisOptions | string | RedisClient | Layer.Layer<Redis, unknown>
  /** Allow the actions (run, archive, delete, cancel, pause/resume, bulk, setting and clearing queue limits, resuming and cancelling workflow executions). Default false: read-only. */
  readonly allowActions?: boolean
  /** When set, every request must carry this token (Bearer header, or the cookie the login form sets; see README). */
  readonly token?: string
  /** The path the dashboard is mounted under, e.g. "/dash" (default: the root). */
  readonly basePath?: string
  /**
   * Host names the dashboard answers to besides `localhost` and IP addresses (which it always
   * answers), e.g. `["dash.example.com"]` behind a reverse proxy that passes that Host. A request for
   * any other name is refused (421): a page on a name an attacker controls, re-pointed at your
   * machine (DNS rebinding), cannot read or drive the dashboard. Names only: no scheme, port or
   * path (any port is accepted); a bad entry throws InvalidArgument.
   */
  readonly allowedHosts?: ReadonlyArray<string>
}

/** A configured dashboard: the request handler, and `close()` for its Redis connection. */
export interface DashboardHandler {
  /**
   * Answers one request. `info.clientAddress`, when the server knows it (serveDashboard passes the
   * socket's), is the client's address: wrong tokens are counted per address, and a client that
   * sent ten in a minute gets 429 until the minute ends (without it, all clients share one count of
   * a hundred).
   */
  (request: Request, info?: { readonly clientAddress?: string | undefined }): Promise<Response>
  /** Closes the Redis connection the handler opened (if any); the handler must not be used afterwards. */
  readonly close: () => Promise<void>
}

/** What the request-level logic needs to know (also used by `handleDashboardRequest`). */
export interface DashboardConfig {
  readonly allowActions: boolean
  readonly basePath: string
  /** The Redis address a "not answering" error names (e.g. 127.0.0.1:6379); unnamed when left out. */
  readonly redisAddress?: string | undefined
}

const errorStatus: Record<string, number> = {
  QueueNotFound: 404,
  TaskNotFound: 404,
  ExecutionNotFound: 404,
  InvalidArgument: 400,
  NotACluster: 400,
  InvalidState: 409,
  QueueNotEmpty: 409,
  RedisError: 503,
  RedisConnectionError: 503
}

const redisUnavailableResponse = (redisAddress: string | undefined) =>
  json({ error: { code: "RedisUnavailable", message: redisUnavailableMessage(redisAddress) } }, 503)

/**
 * A failed API call as `{ error: { code, message } }` with a fitting status. A command Redis did not
 * answer is a 503 RedisUnavailable naming `redisAddress`, never the driver's wording.
 */
export const errorResponse = (e: unknown, redisAddress?: string): Response => {
  if (isRedisUnavailable(e)) return redisUnavailableResponse(redisAddress)
  const tag =
    typeof e === "object" && e !== null && "_tag" in e ? String((e as { _tag: unknown })._tag) : "InternalError"
  const message =
    e instanceof Error || (typeof e === "object" && e !== null && "message" in e)
      ? String((e as { message: unknown }).message)
      : String(e)
  return json({ error: { code: tag, message } }, errorStatus[tag] ?? 500)
}

const readOnlyRefusal = () =>
  json(
    {
      error: {
        code: "ActionsDisabled",
        message:
          "this dashboard is read-only: actions (run, archive, delete, cancel, pause, queue limits, workflow resume and cancel) are refused; start it with --allow-actions (or allowActions: true) to allow them"
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
export const handleApiRequest = (
  request: Request,
  path: string,
  url: URL,
  config: DashboardConfig
): Effect.Effect<Response, never, Broker> => {
  const found = findRoute(request.method, path)
  if (found === undefined)
    return Effect.succeed(json({ error: { code: "NotFound", message: `no API route ${request.method} ${path}` } }, 404))
  if (!("route" in found))
    return Effect.succeed(
      new Response(
        JSON.stringify({
          error: {
            code: "MethodNotAllowed",
            message: `${request.method} is not allowed on ${path}; use ${found.allowed.join(" or ")}`
          }
        }),
        {
          status: 405,
          headers: { "content-type": "application/json; charset=utf-8", allow: found.allowed.join(", ") }
        }
      )
    )
  const { route, params } = found
  if (route.action && !config.allowActions) return Effect.succeed(readOnlyRefusal())
  for (const p of params) {
    try {
      decodeURIComponent(p)
    } catch {
      return Effect.succeed(
        json({ error: { code: "InvalidArgument", message: `the path has a malformed %-escape: ${p}` } }, 400)
      )
    }
  }
  return Effect.flatMap(Broker, (broker) =>
    // While the connection is down (reconnecting) a command would only wait out its retries: say so at once.
    broker.redis.connectionState().down
      ? Effect.succeed(redisUnavailableResponse(config.redisAddress))
      : route
          .handle({ params, url, request })
          .pipe(Effect.catch((e) => Effect.succeed(errorResponse(e, config.redisAddress))))
  )
}

/**
 * A state-changing request sent from another site's page: refused. Its Origin is this dashboard's
 * when it names the request's own Host, or a name in `allowedHosts` (any port): behind a proxy or
 * CDN that passes the origin server's name in Host (CloudFront in front of a Lambda URL), the
 * page's Origin is the public name, which the operator lists there.
 */
const crossSite = (request: Request, url: URL, allowedOrigin: (hostname: string) => boolean): boolean => {
  if (request.method === "GET" || request.method === "HEAD") return false
  const origin = request.headers.get("origin")
  if (origin === null) return false
  try {
    const from = new URL(origin)
    return from.host !== (request.headers.get("host") ?? url.host) && !allowedOrigin(from.hostname)
  } catch {
    return true
  }
}

const refusedResponse = (status: number, code: string, message: string) => json({ error: { code, message } }, status)

const unauthorized = () =>
  new Response(
    JSON.stringify({
      error: { code: "Unauthorized", message: "this dashboard needs a token: send Authorization: Bearer <token>" }
    }),
    {
      status: 401,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "www-authenticate": 'Bearer realm="effect-asynq dash"'
      }
    }
  )

const seeOther = (location: string, setCookie?: string) =>
  new Response(null, {
    status: 303,
    headers: { location, "cache-control": "no-store", ...(setCookie !== undefined ? { "set-cookie": setCookie } : {}) }
  })

/**
 * `<base>/login`: GET shows the token form; POST takes the form's token (a body field, never in a
 * URL) and answers a redirect to the dashboard with the cookie, or the form again saying the token
 * was wrong (401). Without a configured token both go straight to the dashboard. There is no
 * cross-site check here: the form's own POST carries `Origin: null` (the pages' no-referrer policy),
 * and a login changes nothing but the sender's cookie, and only for whoever already has the token.
 */
const handleLogin = async (
  request: Request,
  url: URL,
  config: DashboardConfig,
  tokens: TokenCheck,
  wrongToken: () => void
): Promise<Response> => {
  const home = `${config.basePath}/`
  if (request.method === "GET" || request.method === "HEAD")
    return tokens.required ? loginPage(config, 200, false) : seeOther(home)
  if (request.method !== "POST")
    return refusedResponse(405, "MethodNotAllowed", `${request.method} is not allowed on ${home}login; use GET or POST`)
  if (!tokens.required) return seeOther(home)
  const given = new URLSearchParams(await request.text()).get("token") ?? ""
  const setCookie = tokens.login(given, url)
  if (setCookie === undefined) wrongToken()
  return setCookie === undefined ? loginPage(config, 401, true) : seeOther(home, setCookie)
}

/** A page or asset request (not the API) from a request already let in. */
const handlePage = (request: Request, path: string, config: DashboardConfig): Response => {
  if (path.startsWith("/assets/")) return assetResponse(path.slice("/assets/".length))
  if (request.method !== "GET" && request.method !== "HEAD")
    return refusedResponse(405, "MethodNotAllowed", `${request.method} is not allowed on ${path}`)
  if (path === "/") return appPage(config)
  return refusedResponse(404, "NotFound", `nothing at ${path}; the dashboard is at ${config.basePath}/`)
}

const tooManyWrongTokens = (retryAfterSec: number) =>
  new Response(
    JSON.stringify({
      error: {
        code: "TooManyWrongTokens",
        message: `too many wrong tokens from this client: try again in ${retryAfterSec} s`
      }
    }),
    {
      status: 429,
      headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(retryAfterSec) }
    }
  )

/**
 * A dashboard's handler for a request, with a host the caller's platform vouches for (a Lambda URL's
 * domain) and the client's address when the platform gives it (wrong tokens are counted per address).
 */
export interface DashboardCore {
  readonly handle: (request: Request, trustedHost?: string, clientAddress?: string) => Promise<Response>
  readonly close: () => Promise<void>
}

/**
 * The dashboard behind createDashboardHandler and the Lambda handler (which passes the function
 * URL's domain as trusted). Options are checked here: a bad one throws (TypeError, InvalidArgument).
 * `clock` is the Effect Clock the wrong-token counts read their time from (Effect's default Clock
 * unless given: tests pass a TestClock).
 */
export const createDashboardCore = (
  options: DashboardOptions,
  where: string,
  clock: Clock.Clock = Clock.Clock.defaultValue()
): DashboardCore => {
  const basePath = normaliseBasePath(options.basePath)
  const config: DashboardConfig = {
    allowActions: options.allowActions === true,
    basePath,
    redisAddress: redisAddressOf(options.redis)
  }
  if (options.token !== undefined && options.token.trim() === "")
    throw new TypeError(`${where}: token is empty; pass a non-empty token or leave it out`)
  const allowedHosts = parseAllowedHosts(options.allowedHosts, where)
  const checkHost = makeHostCheck(allowedHosts)
  const allowedOrigin = makeOriginCheck(allowedHosts)
  const tokens = makeTokenCheck(options.token, `${basePath}/`)
  const given = brokerLayerOfLayerOrClient(options.redis)
  const runtime = given
    ? makePromiseRuntime(given)
    : makeBrokerRuntime(options.redis as RedisOptions | string | undefined)

  const failures = makeFailedLogins()
  const handle = async (request: Request, trustedHost?: string, clientAddress?: string): Promise<Response> => {
    const url = new URL(request.url)
    const wrongHost = checkHost(request.headers.get("host") ?? url.host, trustedHost)
    if (wrongHost !== undefined) return refusedResponse(421, "HostNotAllowed", wrongHost)
    if (basePath !== "" && url.pathname === basePath)
      return new Response(null, { status: 308, headers: { location: `${basePath}/${url.search}` } })
    if (basePath !== "" && !url.pathname.startsWith(`${basePath}/`))
      return refusedResponse(404, "NotFound", `not under ${basePath}/`)
    const path = url.pathname.slice(basePath.length) || "/"
    // The login form and its stylesheet are served to everyone; nothing else is without the token.
    if (path === "/assets/style.css" && (request.method === "GET" || request.method === "HEAD"))
      return assetResponse("style.css")
    const isLogin = path === "/login"
    const nowMs = clock.currentTimeMillisUnsafe()
    // A client that sent too many wrong tokens has each request that carries one refused for a while.
    if (tokens.required && (isLogin ? request.method === "POST" : carriesToken(request, url))) {
      const wait = failures.retryAfterSec(clientAddress, nowMs)
      if (wait !== undefined) return tooManyWrongTokens(wait)
    }
    const wrongToken = () => failures.failed(clientAddress, nowMs)
    if (isLogin) return handleLogin(request, url, config, tokens, wrongToken)
    const isApi = path === "/metrics" || path === "/api" || path.startsWith("/api/")
    const auth = tokens.check(request, url)
    if (!auth.ok) {
      if (auth.presented) wrongToken()
      return isApi ? unauthorized() : loginPage(config, 401, false)
    }
    if (auth.via === "query" && !isApi && (request.method === "GET" || request.method === "HEAD")) {
      // Keep the token out of the address bar: set the cookie and come back without it.
      url.searchParams.delete("token")
      return seeOther(`${url.pathname}${url.search}${url.hash}`, auth.setCookie)
    }
    if (crossSite(request, url, allowedOrigin))
      return refusedResponse(
        403,
        "CrossSiteRequest",
        "refused: the request comes from another site's page (its Origin is not this dashboard)"
      )
    if (!isApi) return handlePage(request, path, config)
    try {
      return await runtime.run(handleApiRequest(request, path, url, config))
    } catch (e) {
      // The connection could not be opened (the next request tries again).
      return errorResponse(e, config.redisAddress)
    }
  }
  return { handle, close: () => runtime.close() }
}

/**
 * The dashboard handler: pages at `<basePath>/`, the token form at `<basePath>/login`, assets at
 * `<basePath>/assets/…`, the JSON API at `<basePath>/api/…` and Prometheus text at
 * `<basePath>/metrics`. Read-only unless `allowActions`; answers only `localhost`, IP addresses and
 * `allowedHosts`. Throws when an option is bad (an empty token, a malformed allowed host).
 */
export const createDashboardHandler = (options: DashboardOptions = {}): DashboardHandler => {
  const core = createDashboardCore(options, "createDashboardHandler")
  return Object.assign(
    (request: Request, info?: { readonly clientAddress?: string | undefined }) =>
      core.handle(request, undefined, info?.clientAddress),
    {
      close: core.close
    }
  )
}
