/**
 * The dashboard as a Lambda function URL (or API Gateway HTTP API, payload v2): the event becomes a
 * web-standard Request for the dashboard handler, its Response the function's result. Create it at
 * module scope: the Redis connection then stays open across warm invocations.
 *
 * A function URL is public: what protects it is the token, or IAM auth on the URL (its AuthType
 * AWS_IAM), so the handler refuses to be created with neither. The Host check that guards a local
 * dashboard against DNS rebinding does not protect a Lambda URL (AWS routes a request to the function
 * by its host name, and TLS checks it); the domain AWS reports for the request
 * (`requestContext.domainName`) is answered, and `allowedHosts` may add others.
 */
import { InvalidArgument } from "../../src/broker/errors.js"
import { createDashboardCore, type DashboardOptions } from "../dashboard/handler.js"
import { json } from "../dashboard/api.js"
import type { HttpApiEvent, HttpApiResult } from "./types.js"

/** A function URL event, with the fields the dashboard also reads. */
export interface DashboardUrlEvent extends HttpApiEvent {
  readonly rawQueryString?: string
  /** Payload v2 carries cookies here, not in `headers.cookie`. */
  readonly cookies?: ReadonlyArray<string>
  readonly requestContext?: {
    /** `sourceIp`: the client's address (wrong tokens are counted per address). */
    readonly http?: { readonly method?: string; readonly sourceIp?: string }
    readonly domainName?: string
    /** Set by AWS when the URL (or route) uses IAM auth: the caller it verified. */
    readonly authorizer?: { readonly iam?: unknown }
  }
}

/** The function's result for one request: status, headers and body, with the cookies it sets (payload v2 carries them apart from the headers). */
export interface DashboardUrlResult extends HttpApiResult {
  /** The `Set-Cookie` values (a function URL's payload v2 takes them here, not in `headers`). */
  readonly cookies?: ReadonlyArray<string>
}

/** The Lambda handler serving the dashboard behind a function URL (made by `createDashboardUrlHandler`). */
export interface DashboardUrlHandler {
  /** Answers one function-URL request with the dashboard's page, API answer or `/metrics` text. */
  (event: DashboardUrlEvent): Promise<DashboardUrlResult>
  /** Closes the Redis connection (tests; a Lambda container just ends). */
  readonly close: () => Promise<void>
}

/** The dashboard's options (`DashboardOptions`), plus how the function URL is protected. */
export interface DashboardUrlOptions extends DashboardOptions {
  /**
   * `"AWS_IAM"`: the function URL (or API Gateway route) uses IAM auth, so AWS lets in only signed
   * callers; the dashboard then needs no token, and refuses (403) any event that does not carry the
   * IAM caller AWS verified (`requestContext.authorizer.iam`), so a URL left on AuthType NONE serves
   * nothing. Without it a `token` is required.
   */
  readonly authType?: "AWS_IAM"
}

/** Why these options must not serve a function URL, or undefined. */
const urlOptionsProblem = (options: DashboardUrlOptions): InvalidArgument | undefined => {
  if (options.authType !== undefined && options.authType !== "AWS_IAM")
    return new InvalidArgument({
      field: "authType",
      message: `createDashboardUrlHandler: authType must be "AWS_IAM" or left out, got ${JSON.stringify(options.authType)}`
    })
  if (options.token === undefined && options.authType === undefined)
    return new InvalidArgument({
      field: "token",
      message:
        'createDashboardUrlHandler: no token: on a function URL anyone could read every queue and payload; pass token (is its environment variable set?), or authType: "AWS_IAM" when the URL uses IAM auth'
    })
  return undefined
}

const iamRefusal = () =>
  json(
    {
      error: {
        code: "IamAuthMissing",
        message:
          'this dashboard is configured with authType "AWS_IAM", but the request carries no IAM caller: set the function URL\'s AuthType to AWS_IAM'
      }
    },
    403
  )

/** The event as a web-standard Request (cookies from the `cookies` array, body decoded). */
const toRequest = (event: DashboardUrlEvent): Request => {
  const headers = new Headers()
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v)
  if (event.cookies !== undefined && event.cookies.length > 0) headers.set("cookie", event.cookies.join("; "))
  const host = headers.get("host") ?? event.requestContext?.domainName ?? "localhost"
  const query = event.rawQueryString ? `?${event.rawQueryString}` : ""
  const method = event.requestContext?.http?.method ?? "GET"
  const body =
    event.body === undefined || method === "GET" || method === "HEAD"
      ? undefined
      : event.isBase64Encoded
        ? new Uint8Array(Buffer.from(event.body, "base64"))
        : event.body
  return new Request(`https://${host}${event.rawPath ?? "/"}${query}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {})
  })
}

/**
 * A Lambda handler serving the dashboard (pages, JSON API, /metrics); options as
 * createDashboardHandler's, plus `authType`. Throws InvalidArgument at creation (the cold start)
 * when there is neither a token nor `authType: "AWS_IAM"`.
 */
export const createDashboardUrlHandler = (options: DashboardUrlOptions = {}): DashboardUrlHandler => {
  const problem = urlOptionsProblem(options)
  if (problem !== undefined) throw problem
  const dashboard = createDashboardCore(options, "createDashboardUrlHandler")
  const handle = async (event: DashboardUrlEvent): Promise<DashboardUrlResult> => {
    const response =
      options.authType === "AWS_IAM" && event.requestContext?.authorizer?.iam == null
        ? iamRefusal()
        : await dashboard.handle(
            toRequest(event),
            event.requestContext?.domainName,
            event.requestContext?.http?.sourceIp
          )
    const out: Record<string, string> = {}
    response.headers.forEach((value, key) => {
      if (key !== "set-cookie") out[key] = value
    })
    const cookies = response.headers.getSetCookie()
    return {
      statusCode: response.status,
      headers: out,
      body: await response.text(),
      ...(cookies.length > 0 ? { cookies } : {})
    }
  }
  return Object.assign(handle, { close: dashboard.close })
}
