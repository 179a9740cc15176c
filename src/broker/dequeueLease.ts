import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { type IdAndBytes, idBytesPairsReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { dequeueLeaseLua } from "../redis/lua.generated.js"

export interface DequeueLeaseInput {
  readonly queue: string
  readonly count: number
  readonly leaseExpiresAtSec: number
  /** Now, unix ms: the clock of the queue's flow-control limit, if it has one (lua/includes/flowLimit.lua). */
  readonly nowMs: number
  /** The score the leases get (default `leaseExpiresAtSec`): see `leaseScore` (releaseLeases.ts). */
  readonly leaseScore?: string
  /**
   * The calling worker parks on the queue when the call comes back short (lua/dequeueLease.lua):
   * its server id and the park token (a lease score of its own, see `leaseScore`).
   */
  readonly park?: { readonly server: string; readonly token: string } | undefined
  /**
   * Ids mode (lua/includes/leaseTasks.lua): the reply has the ids alone and the ids go into
   * asynq:{q}:leasing, for the SORT that reads the messages in the same MULTI (leaseByIds.ts).
   */
  readonly idsOnly?: boolean
}

/**
 * Why a queue's flow-control limit cut a lease short: its rate (the next task is allowed `waitMs`
 * after the call's now) or its concurrency cap (a task of the queue has to end first).
 */
export type FlowWait = { readonly by: "rate"; readonly waitMs: number } | { readonly by: "concurrency" }

/** A dequeueLease reply: the popped pairs, and the flow limit's wait when the limit cut the call short. */
export interface DequeueLeaseReply {
  /** A pair with `bytes` undefined is a dangling id the script already removed. */
  readonly pairs: ReadonlyArray<IdAndBytes>
  readonly limited: FlowWait | undefined
}

/**
 * Reads a dequeueLease reply (also the lease part of completeAndLease's): the flat pairs, and when
 * its length is odd, the flow limit's wait at its end (ms >= 0, or -1 for the concurrency cap).
 */
export const dequeueLeaseReply = (
  reply: unknown
): Result.Result<DequeueLeaseReply, ReturnType<typeof unexpectedReply>> => {
  if (Array.isArray(reply) && reply.length % 2 === 1) {
    const wait: unknown = reply[reply.length - 1]
    if (typeof wait !== "number" || !Number.isInteger(wait) || wait < -1)
      return Result.fail(unexpectedReply("dequeueLease", reply, "a flat array of id, msg pairs and a wait"))
    const limited: FlowWait = wait === -1 ? { by: "concurrency" } : { by: "rate", waitMs: wait }
    return Result.map(idBytesPairsReply("dequeueLease", reply.slice(0, -1)), (pairs) => ({ pairs, limited }))
  }
  return Result.map(idBytesPairsReply("dequeueLease", reply), (pairs) => ({ pairs, limited: undefined }))
}

/**
 * Script `dequeueLease`: pops up to `count` tasks of one queue into active under a lease expiring at
 * `leaseExpiresAtSec` (scored `leaseScore` when given; nothing when the queue is paused; no more
 * than the queue's flow-control limit allows). Returns the raw messages, and the limit's wait when
 * it cut the call short.
 */
export const dequeueLeaseScript = defineScript<DequeueLeaseInput, DequeueLeaseReply>({
  name: "dequeueLease",
  source: dequeueLeaseLua,
  buffers: true,
  keys: ({ queue, park }) => {
    const k = queueKeys(queue)
    return park
      ? [k.pending, k.paused, k.active, k.lease, k.taskPrefix, k.parked, k.parkRoom]
      : [k.pending, k.paused, k.active, k.lease, k.taskPrefix]
  },
  args: (i) =>
    i.idsOnly
      ? [i.leaseScore ?? i.leaseExpiresAtSec, i.count, i.nowMs, i.park?.server ?? "", i.park?.token ?? "", "ids"]
      : i.park
        ? [i.leaseScore ?? i.leaseExpiresAtSec, i.count, i.nowMs, i.park.server, i.park.token]
        : [i.leaseScore ?? i.leaseExpiresAtSec, i.count, i.nowMs],
  decode: (reply) => dequeueLeaseReply(reply)
})
