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

/** The part of the Functions Framework's (Express) response the functions use. */
export interface GcfResponse {
  /** Sets the status code. */
  status(code: number): GcfResponse
  /** Sets a response header. */
  set(field: string, value: string): GcfResponse
  /** Sends the body and ends the response. */
  send(body: string): unknown
}

/** A CloudEvent as the Functions Framework passes it (Pub/Sub: data.message.data is base64). */
export interface GcfCloudEvent {
  readonly id?: string
  readonly type?: string
  readonly source?: string
  readonly data?: unknown
}

/** The request's headers with repeated ones joined by commas. */
export const flatHeaders = (h: GcfRequest["headers"]): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(h)) out[k] = v === undefined ? undefined : typeof v === "string" ? v : v.join(",")
  return out
}

/** The request's path without the query string (what an HMAC signature covers). */
export const requestPath = (req: GcfRequest): string => pathOnly(req.path ?? req.url ?? "/")

/** A request stream not read by any body parser yet (Express's request is a Node.js Readable). */
type UnreadStream = AsyncIterable<Uint8Array | string> & {
  readonly readableEnded?: boolean
  readonly readable?: boolean
}

/**
 * The exact body bytes: the Functions Framework's rawBody when a body parser ran; a string or
 * Buffer body; else (a request without a content-type that no parser claimed) the request stream
 * itself, read here, at most `limit + 1` bytes (enough to tell a body that is too large).
 */
export const readRawBody = async (req: GcfRequest, limit = 1024 * 1024): Promise<Uint8Array> => {
  if (req.rawBody !== undefined) return req.rawBody
  if (typeof req.body === "string") return Buffer.from(req.body, "utf8")
  if (Buffer.isBuffer(req.body)) return req.body
  const stream = req as unknown as Partial<UnreadStream>
  if (typeof stream[Symbol.asyncIterator] !== "function" || stream.readableEnded === true || stream.readable === false)
    return new Uint8Array()
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of stream as UnreadStream) {
    const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk)
    chunks.push(b)
    size += b.byteLength
    if (size > limit) break
  }
  return Buffer.concat(chunks)
}

/** Answers 405 and returns false unless the request is a POST (tick and drain run only on POST). */
export const requirePost = (req: GcfRequest, res: GcfResponse): boolean => {
  if (req.method.toUpperCase() === "POST") return true
  sendJson(
    res,
    405,
    { "content-type": "application/json", allow: "POST" },
    JSON.stringify({ error: { code: "method_not_allowed", message: `method ${req.method} not allowed: use POST` } })
  )
  return false
}

/** Sends a JSON answer with this status and these headers. */
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
  const body = await readRawBody(req)
  const outcome = await Effect.runPromise(
    verifyAuth(auth, { method: req.method, path: requestPath(req), headers: flatHeaders(req.headers), body }).pipe(
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
