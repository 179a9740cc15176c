/**
 * Hand-overs to parked workers (lua/includes/pushToParked.lua) after the enqueue: the worker's
 * once-a-second statement that it is alive, with the hand-overs it received (`confirmHandovers`),
 * and giving back to pending the hand-overs nobody confirmed in time (`reclaimHandovers`).
 */
import { confirmHandoversLua, reclaimHandoversLua } from "../redis/lua.generated.js"
import type { ScriptArg } from "../redis/Redis.js"
import { queueKeys } from "../wire/keys.js"
import { integerReply, stringsReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixNanosString } from "./time.js"

/** A hand-over a worker received: the token it came under and its task's id. */
export interface ReceivedHandover {
  readonly token: string
  readonly id: string
}

export interface ConfirmHandoversInput {
  readonly queue: string
  /** The worker's server id. */
  readonly server: string
  /** How long the liveness mark lives (ms, >= 1). */
  readonly markTtlMs: number
  /** The lease expiry (unix seconds) the hand-overs it runs now get. */
  readonly leaseExpiresAtSec: number
  readonly received: ReadonlyArray<ReceivedHandover>
}

/**
 * Script `confirmHandovers`: sets the worker's liveness mark in `queue`, takes the hand-overs it
 * received off the unconfirmed ones, and moves the lease of those still leased under their token
 * (it runs them) to `leaseExpiresAtSec`. Returns the ids whose lease moved.
 */
export const confirmHandoversScript = defineScript<ConfirmHandoversInput, ReadonlyArray<string>>({
  name: "confirmHandovers",
  source: confirmHandoversLua,
  buffers: false,
  keys: ({ queue, server }) => {
    const k = queueKeys(queue)
    return [k.alive(server), k.handover, k.lease]
  },
  args: (i) => {
    const args: Array<ScriptArg> = [Math.max(1, Math.ceil(i.markTtlMs)), i.server, i.leaseExpiresAtSec]
    for (const r of i.received) args.push(r.token, r.id)
    return args
  },
  decode: (reply) => stringsReply("confirmHandovers", reply)
})

export interface ReclaimHandoversInput {
  readonly queue: string
  readonly nowMs: number
  /** Most records to look at in this call. */
  readonly max: number
}

/**
 * Script `reclaimHandovers`: the hand-overs of `queue` whose time to be confirmed is past and whose
 * task is still leased under the hand-over's token go back to the head of pending (not counted as
 * an attempt). Returns how many went back.
 */
export const reclaimHandoversScript = defineScript<ReclaimHandoversInput, number>({
  name: "reclaimHandovers",
  source: reclaimHandoversLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.handover, k.lease, k.active, k.pending, k.taskPrefix]
  },
  args: (i) => [unixNanosString(i.nowMs), i.queue, i.max],
  decode: (reply) => integerReply("reclaimHandovers", reply)
})
