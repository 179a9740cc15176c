/**
 * How a connection comes back after Redis went away: the delay between reconnect attempts (capped,
 * jittered, never giving up), and a watcher that tells when an outage starts and when it is over,
 * once each, not once per attempt.
 */
import type { EventEmitter } from "node:events"

/** The first reconnect delay; each later attempt doubles it up to `reconnectMaxDelayMs`. */
export const reconnectBaseDelayMs = 100
/** The longest wait between two reconnect attempts. */
export const reconnectMaxDelayMs = 2000

/**
 * The wait before reconnect attempt `attempt` (1-based): 100 ms doubling to 2 s, of which a random
 * half is dropped ("equal jitter"), so many clients do not all knock at once. Always a number: the
 * connection retries for as long as it stays open. `random` is in [0, 1).
 */
export const reconnectDelayMs = (attempt: number, random: () => number = Math.random): number => {
  const cap = Math.min(reconnectBaseDelayMs * 2 ** Math.max(0, Math.min(attempt - 1, 16)), reconnectMaxDelayMs)
  return Math.round(cap / 2 + random() * (cap / 2))
}

/** What the outage watcher has seen of a connection. */
export interface ConnectionState {
  /** The connection is lost and reconnecting. */
  readonly down: boolean
  /** How many outages began since the watcher was attached. */
  readonly outages: number
}

export interface OutageEvents {
  /** An outage began (the connection was lost and is being re-established). Called once per outage. */
  readonly onLost: () => void
  /** The connection is ready again after an outage. Called once per outage. */
  readonly onRestored: () => void
}

/**
 * Watches an ioredis client (single node, Sentinel or Cluster) for outages: "reconnecting" (emitted
 * before every attempt) starts one unless one is going on; "ready" ends it. Adds two listeners,
 * once; returns the state it records.
 */
export const watchOutages = (client: EventEmitter, events: OutageEvents): { readonly state: () => ConnectionState } => {
  let down = false
  let outages = 0
  client.on("reconnecting", () => {
    if (down) return
    down = true
    outages++
    events.onLost()
  })
  client.on("ready", () => {
    if (!down) return
    down = false
    events.onRestored()
  })
  return { state: () => ({ down, outages }) }
}
