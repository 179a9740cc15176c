import { releaseLeasesLua } from "../redis/lua.generated.js"
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { integerReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixNanosString } from "./time.js"

export interface ReleaseLeasesInput {
  readonly queue: string
  /** The lease score the dequeue was sent with (see `leaseScore`). */
  readonly leaseScore: string
  /** The ids the dequeue's reply did bring (they stay leased). */
  readonly received: ReadonlyArray<string>
  readonly nowMs: number
}

/**
 * The lease score of one dequeue call: just under its expiry, `expiresSec - 1` plus a random
 * fraction (six decimals, never 0), so the tasks that call leased can be found again when its reply
 * is lost. Every reader compares lease scores with whole seconds (the recoverer's cutoff, asynq's
 * ListLeaseExpired, extendLease), and for a whole-second cutoff C, `score <= C` holds exactly
 * when `expiresSec <= C`: the lease behaves as one scored `expiresSec`.
 */
export const leaseScore = (expiresSec: number, random: () => number = Math.random): string =>
  `${expiresSec - 1}.${String(1 + Math.floor(random() * 999_998)).padStart(6, "0")}`

/** The expiry second of a lease scored `score` (the inverse of `leaseScore`). */
export const leaseScoreExpirySec = (score: string): number => Math.floor(Number(score)) + 1

/**
 * Script `releaseLeases`: the tasks leased under exactly `leaseScore` and not in `received` go back
 * to the head of pending (a dequeue whose reply was lost leased them to nobody). Returns how many.
 */
export const releaseLeasesScript = defineScript<ReleaseLeasesInput, number>({
  name: "releaseLeases",
  source: releaseLeasesLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.active, k.lease, k.pending, k.taskPrefix]
  },
  args: (i) => [i.leaseScore, unixNanosString(i.nowMs), ...i.received],
  decode: (reply) => integerReply("releaseLeases", reply)
})
