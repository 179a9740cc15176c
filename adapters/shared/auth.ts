import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../../src/broker/errors.js"
import { HttpProblem, unauthorized } from "./httpProblem.js"

/**
 * How an HTTP endpoint authenticates its callers.
 * - `shared-secret`: the caller sends the secret itself in `header` (default `x-asynq-secret`).
 * - `hmac`: the caller signs the raw body: `header` (default `x-asynq-signature`) carries
 *   `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; signatures older or newer
 *   than `toleranceMs` (default 5 minutes) are refused, so a captured request cannot be replayed later.
 * - `none`: no check (only for endpoints already protected elsewhere, e.g. IAM auth on a function URL).
 */
export type AuthConfig =
  | { readonly kind: "shared-secret"; readonly secret: string; readonly header?: string }
  | { readonly kind: "hmac"; readonly secret: string; readonly header?: string; readonly toleranceMs?: number }
  | { readonly kind: "none" }

export const defaultSecretHeader = "x-asynq-secret"
export const defaultSignatureHeader = "x-asynq-signature"

/** Header names are case-insensitive: look one up in a plain record. */
export const headerValue = (headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
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

const hmacHex = (secret: string, timestamp: string, body: string) =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")

/** The signature header value for a body, as a caller computes it (`nowMs` = the signing time). */
export const signBody = (secret: string, body: string, nowMs: number): string => {
  const t = String(Math.floor(nowMs / 1000))
  return `t=${t},v1=${hmacHex(secret, t, body)}`
}

/** Checks a request's credentials; fails with a 401 HttpProblem that says what is missing or wrong. */
export const verifyAuth = (
  auth: AuthConfig,
  headers: Readonly<Record<string, string | undefined>>,
  rawBody: string
): Effect.Effect<void, HttpProblem> =>
  Effect.gen(function* () {
    if (auth.kind === "none") return
    if (auth.kind === "shared-secret") {
      const name = auth.header ?? defaultSecretHeader
      const given = headerValue(headers, name)
      if (given === undefined || given === "") return yield* unauthorized(`missing ${name} header`)
      if (!sameSecret(given, auth.secret)) return yield* unauthorized(`wrong secret in ${name} header`)
      return
    }
    const name = auth.header ?? defaultSignatureHeader
    const given = headerValue(headers, name)
    if (given === undefined || given === "") return yield* unauthorized(`missing ${name} header`)
    const parts = new Map(given.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]))
    const t = parts.get("t")
    const v1 = parts.get("v1")
    if (!t || !/^\d+$/.test(t) || !v1) return yield* unauthorized(`malformed ${name} header: expected "t=<unix seconds>,v1=<hex hmac>"`)
    const nowMs = yield* Clock.currentTimeMillis
    const tolerance = auth.toleranceMs ?? 300_000
    if (Math.abs(nowMs - Number(t) * 1000) > tolerance)
      return yield* unauthorized(`signature timestamp is outside the allowed window of ${Math.round(tolerance / 1000)} s`)
    if (!sameSecret(v1, hmacHex(auth.secret, t, rawBody))) return yield* unauthorized(`signature in ${name} header does not match the body`)
  })
