/**
 * Wrong tokens, counted per client: after `maxFailures` wrong tokens from one client address
 * within `windowMs`, that client's requests carrying a token (a login, a Bearer header, a cookie,
 * `?token=`) are answered 429 until the window ends, right token or not, so a token cannot be
 * guessed faster than that. A client whose address the platform does not give shares one count
 * with all such clients, with a larger allowance (`maxFailuresUnknown`). Requests without any token
 * (a first visit) are neither counted nor refused.
 */

/** The allowances. */
export interface FailedLoginLimits {
  readonly maxFailures: number
  readonly maxFailuresUnknown: number
  readonly windowMs: number
}

/** Ten wrong tokens a minute per client address; a hundred for the clients without one, together. */
export const defaultFailedLoginLimits: FailedLoginLimits = {
  maxFailures: 10,
  maxFailuresUnknown: 100,
  windowMs: 60_000
}

/** Most clients tracked at once (the oldest windows are dropped first). */
const maxClients = 10_000

/** The count of wrong tokens of a dashboard's clients. */
export interface FailedLogins {
  /** Seconds until `client` may try again, or undefined when it may now. */
  readonly retryAfterSec: (client: string | undefined, nowMs: number) => number | undefined
  /** One wrong token from `client`. */
  readonly failed: (client: string | undefined, nowMs: number) => void
}

export const makeFailedLogins = (limits: FailedLoginLimits = defaultFailedLoginLimits): FailedLogins => {
  const windows = new Map<string, { startMs: number; failures: number }>()
  const keyOf = (client: string | undefined) => (client === undefined || client === "" ? "" : `ip:${client}`)
  const live = (key: string, nowMs: number) => {
    const w = windows.get(key)
    if (w === undefined || nowMs - w.startMs >= limits.windowMs) {
      windows.delete(key)
      return undefined
    }
    return w
  }
  return {
    retryAfterSec: (client, nowMs) => {
      const key = keyOf(client)
      const w = live(key, nowMs)
      const max = key === "" ? limits.maxFailuresUnknown : limits.maxFailures
      return w !== undefined && w.failures >= max
        ? Math.max(1, Math.ceil((w.startMs + limits.windowMs - nowMs) / 1000))
        : undefined
    },
    failed: (client, nowMs) => {
      const key = keyOf(client)
      const w = live(key, nowMs)
      if (w !== undefined) {
        w.failures += 1
        return
      }
      if (windows.size >= maxClients) windows.delete(windows.keys().next().value!)
      windows.set(key, { startMs: nowMs, failures: 1 })
    }
  }
}
