/**
 * The dashboard's token check. With a token configured, a request is let in when it carries it:
 * - `Authorization: Bearer <token>` (scripts, Prometheus' `authorization` setting), or
 * - the `effect_asynq_dash` cookie (the browser, after one visit with `?token=<token>`; the cookie
 *   holds a SHA-256 of the token, HttpOnly, SameSite=Strict), or
 * - `?token=<token>` in the URL (the first browser visit; a page is then redirected to itself
 *   without it, setting the cookie, so the token does not stay in the address bar or history).
 * Comparisons are constant-time.
 */
import { createHash, timingSafeEqual } from "node:crypto"

export const cookieName = "effect_asynq_dash"

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
  | { readonly ok: false }

/** A token checker; `undefined` token: everyone is let in. */
export const makeTokenCheck = (token: string | undefined, cookiePath: string) => {
  if (token === undefined) return (_request: Request, _url: URL): AuthOutcome => ({ ok: true, via: "none" })
  const digest = sha256(token)
  const cookieDigest = createHash("sha256").update(digest).digest("hex")
  return (request: Request, url: URL): AuthOutcome => {
    const authorization = request.headers.get("authorization")
    if (authorization !== null && /^bearer /i.test(authorization) && sameSecret(authorization.slice(7).trim(), digest)) return { ok: true, via: "bearer" }
    const cookie = cookieValue(request, cookieName)
    if (cookie !== undefined && cookie.length === cookieDigest.length && timingSafeEqual(Buffer.from(cookie), Buffer.from(cookieDigest))) return { ok: true, via: "cookie" }
    const query = url.searchParams.get("token")
    if (query !== null && sameSecret(query, digest))
      return { ok: true, via: "query", setCookie: `${cookieName}=${cookieDigest}; Path=${cookiePath}; HttpOnly; SameSite=Strict` }
    return { ok: false }
  }
}
