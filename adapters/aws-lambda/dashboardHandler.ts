/**
 * The dashboard as a Lambda function URL (or API Gateway HTTP API, payload v2): the event becomes a
 * web-standard Request for the dashboard handler, its Response the function's result. Create it at
 * module scope: the Redis connection then stays open across warm invocations.
 */
import { createDashboardHandler, type DashboardOptions } from "../dashboard/handler.js"
import type { HttpApiEvent, HttpApiResult } from "./types.js"

/** A function URL event, with the fields the dashboard also reads. */
export interface DashboardUrlEvent extends HttpApiEvent {
  readonly rawQueryString?: string
  /** Payload v2 carries cookies here, not in `headers.cookie`. */
  readonly cookies?: ReadonlyArray<string>
  readonly requestContext?: { readonly http?: { readonly method?: string }; readonly domainName?: string }
}

export interface DashboardUrlResult extends HttpApiResult {
  readonly cookies?: ReadonlyArray<string>
}

/** The Lambda handler serving the dashboard behind a function URL (made by `createDashboardUrlHandler`). */
export interface DashboardUrlHandler {
  /** Answers one function-URL request with the dashboard's page, API answer or `/metrics` text. */
  (event: DashboardUrlEvent): Promise<DashboardUrlResult>
  /** Closes the Redis connection (tests; a Lambda container just ends). */
  readonly close: () => Promise<void>
}

/** A Lambda handler serving the dashboard (pages, JSON API, /metrics); options as createDashboardHandler's. */
export const createDashboardUrlHandler = (options: DashboardOptions = {}): DashboardUrlHandler => {
  const dashboard = createDashboardHandler(options)
  const handle = async (event: DashboardUrlEvent): Promise<DashboardUrlResult> => {
    const headers = new Headers()
    for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v)
    if (event.cookies !== undefined && event.cookies.length > 0) headers.set("cookie", event.cookies.join("; "))
    const host = headers.get("host") ?? event.requestContext?.domainName ?? "localhost"
    const query = event.rawQueryString ? `?${event.rawQueryString}` : ""
    const method = event.requestContext?.http?.method ?? "GET"
    const body = event.body === undefined || method === "GET" || method === "HEAD" ? undefined : event.isBase64Encoded ? new Uint8Array(Buffer.from(event.body, "base64")) : event.body
    const response = await dashboard(new Request(`https://${host}${event.rawPath ?? "/"}${query}`, { method, headers, ...(body !== undefined ? { body } : {}) }))
    const out: Record<string, string> = {}
    response.headers.forEach((value, key) => {
      if (key !== "set-cookie") out[key] = value
    })
    const cookies = response.headers.getSetCookie()
    return { statusCode: response.status, headers: out, body: await response.text(), ...(cookies.length > 0 ? { cookies } : {}) }
  }
  return Object.assign(handle, { close: dashboard.close })
}
