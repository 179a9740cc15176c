import * as Effect from "effect/Effect"
import { type AcceptedSignature, type AuthConfig, pathOnly, verifyAuth } from "../shared/auth.js"
import { type JsonResponse, problemResponse } from "../shared/httpProblem.js"

/**
 * The parts of the Functions Framework's (Express) request and response the functions use,
 * typed structurally so this package needs no dependency on @google-cloud/functions-framework.
 */
export interface GcfRequest {
  readonly method: string
  /** The URL path, without the query string (Express). */
  readonly path?: string
  /** The URL as received, with the query string. */
  readonly url?: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The unparsed body (the Functions Framework sets it). */
  readonly rawBody?: Buffer
  readonly body?: unknown
}

export interface GcfResponse {
  status(code: number): GcfResponse
  set(field: string, value: string): GcfResponse
  send(body: string): unknown
}

/** A CloudEvent as the Functions Framework passes it (Pub/Sub: data.message.data is base64). */
export interface GcfCloudEvent {
  readonly id?: string
  readonly type?: string
  readonly source?: string
  readonly data?: unknown
}

export const flatHeaders = (h: GcfRequest["headers"]): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(h)) out[k] = v === undefined ? undefined : typeof v === "string" ? v : v.join(",")
  return out
}

/** The request's path without the query string (what an HMAC signature covers). */
export const requestPath = (req: GcfRequest): string => pathOnly(req.path ?? req.url ?? "/")

/** The exact body bytes (the Functions Framework's rawBody; a string body as UTF-8 otherwise). */
export const rawBytes = (req: GcfRequest): Uint8Array =>
  req.rawBody ?? Buffer.from(typeof req.body === "string" ? req.body : "", "utf8")

export const sendJson = (res: GcfResponse, status: number, headers: Readonly<Record<string, string>>, body: string) => {
  let r = res.status(status)
  for (const [k, v] of Object.entries(headers)) r = r.set(k, v)
  r.send(body)
}

/**
 * Checks the caller's credentials without touching Redis; on failure answers 401 and returns
 * undefined. A valid HMAC signature comes back in `signature`, to be claimed with `refuseReplay`.
 */
export const authenticate = async (
  auth: AuthConfig,
  req: GcfRequest,
  res: GcfResponse
): Promise<{ readonly signature: AcceptedSignature | undefined } | undefined> => {
  const outcome = await Effect.runPromise(
    verifyAuth(auth, { method: req.method, path: requestPath(req), headers: flatHeaders(req.headers), body: rawBytes(req) }).pipe(
      Effect.map((signature) => ({ signature })),
      Effect.catchTag("HttpProblem", (p) => Effect.succeed({ refused: problemResponse(p) }))
    )
  )
  if (!("refused" in outcome)) return outcome
  sendJson(res, outcome.refused.status, outcome.refused.headers, outcome.refused.body)
  return undefined
}

/** Sends a JsonResponse. */
export const sendResponse = (res: GcfResponse, r: JsonResponse) => sendJson(res, r.status, r.headers, r.body)
