/**
 * The dashboard's token check. With a token configured, a request is let in when it carries it:
 * - `Authorization: Bearer <token>` (scripts, Prometheus' `authorization` setting), or
 * - the `effect_asynq_dash_<tag>` cookie, set by the login form (the token POSTed to `<base>/login`) or by
 *   one visit with `?token=<token>` (a page is then redirected to itself without it, so the token
 *   does not stay in the address bar or history). The cookie holds a SHA-256 of the token's
 *   SHA-256, not the token; HttpOnly, SameSite=Strict, and Secure over https. Its name carries a
 *   tag derived from the token, so dashboards with different tokens on one host (cookies are not
 *   kept apart by port) each keep their own cookie.
 * Comparisons are constant-time.
 */
import { createHash, timingSafeEqual } from "node:crypto"

/** The cookie's name for a token's digest: `effect_asynq_dash_` and 8 hex digits derived from it (not from the cookie's value). */
export const cookieNameFor = (tokenDigest: Buffer): string =>
  `effect_asynq_dash_${createHash("sha256").update("effect-asynq dashboard cookie name\n").update(tokenDigest).digest("hex").slice(0, 8)}`

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest()

const sameSecret = (given: string, expectedDigest: Buffer) => timingSafeEqual(sha256(given), expectedDigest)

const cookieValue = (request: Request, name: string): string | undefined => {
  const header = request.headers.get("cookie")
  if (header === null) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export type AuthOutcome =
  | { readonly ok: true; readonly via: "none" | "bearer" | "cookie" }
  | { readonly ok: true; readonly via: "query"; readonly setCookie: string }
  | { readonly ok: false; readonly presented: boolean }

/** A dashboard's token checks; with no token everyone is let in. */
export interface TokenCheck {
  /** Whether a token is configured. */
  readonly required: boolean
  /** Whether a request carries the token (header, cookie or `?token=`); when not, whether it carried one at all (`presented`: a wrong one). */
  readonly check: (request: Request, url: URL) => AuthOutcome
  /** A login form's token: the Set-Cookie that lets the browser in, or undefined when it is wrong. */
  readonly login: (given: string, url: URL) => string | undefined
}

/** Whether a request carries something that could be the token: a Bearer header, a dashboard cookie, `?token=`. */
export const carriesToken = (request: Request, url: URL): boolean =>
  request.headers.get("authorization") !== null ||
  url.searchParams.has("token") ||
  (request.headers.get("cookie") ?? "").includes("effect_asynq_dash_")

/** A token checker whose cookie is scoped to `cookiePath`; `undefined` token: everyone is let in. */
export const makeTokenCheck = (token: string | undefined, cookiePath: string): TokenCheck => {
  if (token === undefined) return { required: false, check: () => ({ ok: true, via: "none" }), login: () => undefined }
  const digest = sha256(token)
  const cookieDigest = createHash("sha256").update(digest).digest("hex")
  const cookieName = cookieNameFor(digest)
  const setCookie = (url: URL) =>
    `${cookieName}=${cookieDigest}; Path=${cookiePath}; HttpOnly; SameSite=Strict${url.protocol === "https:" ? "; Secure" : ""}`
  return {
    required: true,
    check: (request, url) => {
      const authorization = request.headers.get("authorization")
      if (
        authorization !== null &&
        /^bearer /i.test(authorization) &&
        sameSecret(authorization.slice(7).trim(), digest)
      )
        return { ok: true, via: "bearer" }
      const cookie = cookieValue(request, cookieName)
      if (
        cookie !== undefined &&
        cookie.length === cookieDigest.length &&
        timingSafeEqual(Buffer.from(cookie), Buffer.from(cookieDigest))
      )
        return { ok: true, via: "cookie" }
      const query = url.searchParams.get("token")
      if (query !== null && sameSecret(query, digest)) return { ok: true, via: "query", setCookie: setCookie(url) }
      return { ok: false, presented: authorization !== null || cookie !== undefined || query !== null }
    },
    login: (given, url) => (sameSecret(given, digest) ? setCookie(url) : undefined)
  }
}
