import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { extendLeaseScript } from "../broker/extendLease.js"
import { runScript } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import { durationAtLeast } from "./validate.js"

/** Which held tasks' leases to extend, and by how much. */
export interface ExtendLeaseOptions {
  readonly queue: string
  readonly ids: ReadonlyArray<string>
  /** New lease length from now (default 30000 ms). */
  readonly leaseMs?: number
}

/** What a lease extension did: the leases extended, the ones lost, and the new expiry. */
export interface ExtendLeaseResult {
  /** The ids still held: their lease now runs until `expiresAtMs` (or later). */
  readonly extended: ReadonlyArray<string>
  /** Ids no longer held (recovered, finished or deleted): stop working on them. */
  readonly lost: ReadonlyArray<string>
  readonly expiresAtMs: number
}

/** Extends the leases of tasks this worker holds; reports which ones it still holds. */
export const extendLease = Effect.fn("Steps.extendLease")(function* (options: ExtendLeaseOptions) {
  const leaseMs = yield* durationAtLeast("leaseMs", options.leaseMs ?? 30_000, 1000)
  const now = yield* Clock.currentTimeMillis
  const expiresSec = unixSeconds(now + leaseMs)
  const extended =
    options.ids.length === 0
      ? []
      : yield* runScript(extendLeaseScript, { queue: options.queue, ids: options.ids, expiresAtSec: expiresSec })
  const held = new Set(extended)
  return {
    extended,
    lost: options.ids.filter((id) => !held.has(id)),
    expiresAtMs: expiresSec * 1000
  } satisfies ExtendLeaseResult as ExtendLeaseResult
})
