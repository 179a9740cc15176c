import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../../src/broker/errors.js"
import { HttpProblem, unauthorized } from "./httpProblem.js"

/**
 * How an HTTP endpoint authenticates its callers.
 * - `shared-secret`: the caller sends the secret itself in `header` (default `x-asynq-secret`).
 * - `hmac`: the caller signs the request: `header` (default `x-asynq-signature`) carries
 *   `t=<unix ms>,n=<nonce>,v2=<hex HMAC-SHA256(secret, "v2.<t>.<n>.<METHOD>.<path>." + raw body bytes)>`
 *   (see `signBody`; the nonce makes two requests with the same body in the same millisecond
 *   different requests). The older `t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
 *   "<t>.<METHOD>.<path>." + body)>` is still accepted. Signatures older or newer than `toleranceMs`
 *   (default 5 minutes) are refused. The enqueue endpoint enqueues once per signature: the same
 *   signed request sent again within the window gets the first answer (same task) and writes
 *   nothing; the drain function refuses it (401 `replayed_signature`).
 * - `none`: no check (only for endpoints already protected elsewhere, e.g. IAM auth on a function URL).
 */
export type AuthConfig =
  | { readonly kind: "shared-secret"; readonly secret: string; readonly header?: string }
  | { readonly kind: "hmac"; readonly secret: string; readonly header?: string; readonly toleranceMs?: number }
  | { readonly kind: "none" }

export const defaultSecretHeader = "x-asynq-secret"
export const defaultSignatureHeader = "x-asynq-signature"
export const defaultToleranceMs = 300_000

/** Header names are case-insensitive: look one up in a plain record. */
export const headerValue = (
  headers: Readonly<Record<string, string | undefined>>,
  name: string
): string | undefined => {
  const lower = name.toLowerCase()
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v
  return undefined
}

/**
 * Checks an endpoint's auth settings when its handler is created, so a misconfigured function fails
 * at cold start instead of accepting everyone: an empty or missing secret (say, an unset environment
 * variable) would otherwise make `""` the password. Throws InvalidArgument.
 */
export const checkAuthConfig = (auth: AuthConfig | undefined, endpoint: string): void => {
  const problem =
    auth === undefined || typeof auth !== "object"
      ? `no auth given; pass { kind: "hmac", secret }, { kind: "shared-secret", secret } or, for an endpoint protected elsewhere, { kind: "none" }`
      : auth.kind === "none"
        ? undefined
        : auth.kind !== "shared-secret" && auth.kind !== "hmac"
          ? `unknown auth kind ${JSON.stringify((auth as { kind: unknown }).kind)}; expected "hmac", "shared-secret" or "none"`
          : typeof auth.secret !== "string" || auth.secret.trim() === ""
            ? `auth.secret is empty; set it (is its environment variable defined?), or use { kind: "none" } for an endpoint protected elsewhere`
            : undefined
  if (problem !== undefined) throw new InvalidArgument({ field: "auth", message: `${endpoint}: ${problem}` })
}

const digest = (s: string) => createHash("sha256").update(s).digest()
const sameSecret = (a: string, b: string) => timingSafeEqual(digest(a), digest(b))

/** What an HMAC signature covers: the method, the path (no query string) and the exact body bytes. */
export interface SignedRequest {
  /** The HTTP method; signed upper-cased. */
  readonly method: string
  /** The URL path the endpoint receives, without the query string (e.g. `/enqueue`). */
  readonly path: string
  /** The raw body: bytes, or a string signed as its UTF-8 bytes. */
  readonly body: string | Uint8Array
}

const bodyBytes = (body: string | Uint8Array): Uint8Array =>
  typeof body === "string" ? Buffer.from(body, "utf8") : body

/** Drops a query string or fragment: the signed path is the path alone. */
export const pathOnly = (urlOrPath: string): string => {
  const cut = urlOrPath.search(/[?#]/)
  const path = cut === -1 ? urlOrPath : urlOrPath.slice(0, cut)
  return path === "" ? "/" : path
}

/** HMAC-SHA256(secret, `${prefix}${METHOD}.${path}.` followed by the raw body bytes), hex. */
const hmacHex = (secret: string, prefix: string, request: SignedRequest) =>
  createHmac("sha256", secret)
    .update(`${prefix}${request.method.toUpperCase()}.${pathOnly(request.path)}.`, "utf8")
    .update(bodyBytes(request.body))
    .digest("hex")

/** What a v2 signature's HMAC covers before the method: the version, the timestamp (unix ms) and the nonce. */
const v2Prefix = (t: string, n: string) => `v2.${t}.${n}.`
/** What a v1 signature's HMAC covers before the method: the timestamp (unix seconds). */
const v1Prefix = (t: string) => `${t}.`

/** A nonce: the characters `signBody` and the endpoints accept (8 to 64 of A-Z a-z 0-9 _ -). */
const nonceFormat = /^[A-Za-z0-9_-]{8,64}$/

/**
 * The `x-asynq-signature` value for a request, as a caller computes it (`nowMs` = the signing time):
 * `t=<unix ms>,n=<nonce>,v2=<hex HMAC-SHA256(secret, "v2.<t>.<n>.<METHOD>.<path>." + body bytes)>`,
 * with a fresh random nonce unless one is given (8 to 64 characters of A-Z a-z 0-9 _ -).
 * One signature is one request: a retry after a lost answer sends the same signed request again
 * (the enqueue endpoint answers it with the first answer and writes nothing twice); signing anew
 * makes a new request.
 */
export const signBody = (
  secret: string,
  request: SignedRequest,
  nowMs: number,
  nonce: string = randomBytes(12).toString("base64url")
): string => {
  if (!nonceFormat.test(nonce))
    throw new InvalidArgument({
      field: "nonce",
      message: `nonce must be 8 to 64 characters of A-Z a-z 0-9 _ -, got ${JSON.stringify(nonce)}`
    })
  const t = String(Math.floor(nowMs))
  return `t=${t},n=${nonce},v2=${hmacHex(secret, v2Prefix(t, nonce), request)}`
}

/** The parts of a request authentication reads. */
export interface AuthRequest extends SignedRequest {
  readonly headers: Readonly<Record<string, string | undefined>>
}

/**
 * A valid HMAC signature, to be remembered until `expiresAtMs` (the end of its window) so a replay
 * is refused (see `refuseReplay`). `undefined` for the other auth kinds (nothing to remember).
 */
export interface AcceptedSignature {
  readonly signature: string
  readonly expiresAtMs: number
}

/**
 * Checks a request's credentials without touching Redis; fails with a 401 HttpProblem that says what
 * is missing or wrong. A valid HMAC signature is returned, to be claimed once with `refuseReplay`.
 */
export const verifyAuth = (
  auth: AuthConfig,
  request: AuthRequest
): Effect.Effect<AcceptedSignature | undefined, HttpProblem> =>
  Effect.gen(function* () {
    if (auth.kind === "none") return undefined
    if (auth.kind === "shared-secret") {
      const name = auth.header ?? defaultSecretHeader
      const given = headerValue(request.headers, name)
      if (given === undefined || given === "") return yield* unauthorized(`missing ${name} header`)
      if (!sameSecret(given, auth.secret)) return yield* unauthorized(`wrong secret in ${name} header`)
      return undefined
    }
    const name = auth.header ?? defaultSignatureHeader
    const given = headerValue(request.headers, name)
    if (given === undefined || given === "") return yield* unauthorized(`missing ${name} header`)
    const parts = new Map(given.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]))
    const t = parts.get("t")
    const n = parts.get("n")
    const v2 = parts.get("v2")
    const v1 = parts.get("v1")
    const hex = /^[0-9a-fA-F]{64}$/
    const isV2 = v2 !== undefined && hex.test(v2) && n !== undefined && nonceFormat.test(n)
    if (!t || !/^\d+$/.test(t) || !(isV2 || (v1 !== undefined && hex.test(v1))))
      return yield* unauthorized(
        `malformed ${name} header: expected "t=<unix ms>,n=<nonce>,v2=<64 hex digits of HMAC-SHA256>" (or the older "t=<unix seconds>,v1=<64 hex digits>")`
      )
    const nowMs = yield* Clock.currentTimeMillis
    const tolerance = auth.toleranceMs ?? defaultToleranceMs
    const signedAtMs = isV2 ? Number(t) : Number(t) * 1000
    if (Math.abs(nowMs - signedAtMs) > tolerance)
      return yield* unauthorized(
        `signature timestamp is outside the allowed window of ${Math.round(tolerance / 1000)} s`
      )
    const digest = (isV2 ? v2! : v1!).toLowerCase()
    if (!sameSecret(digest, hmacHex(auth.secret, isV2 ? v2Prefix(t, n!) : v1Prefix(t), request)))
      return yield* unauthorized(
        `signature in ${name} header does not match the request (method, path, timestamp${isV2 ? ", nonce" : ""} and body)`
      )
    return { signature: digest, expiresAtMs: signedAtMs + tolerance }
  })

/** A signature already used within its window. */
export const replayedSignature = () =>
  new HttpProblem({
    status: 401,
    code: "replayed_signature",
    message: "this signature was already used: this endpoint accepts a signed request once; sign each request anew"
  })
