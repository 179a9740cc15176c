import { completeAndLeaseLua } from "../redis/lua.generated.js"
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { type CompleteBatchOutcomes, completionArgs, completionLockKeys, completionOutcomes } from "./completeBatch.js"
import { unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { statsExpireAt } from "./time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

export interface CompleteAndLeaseInput {
  /** Tasks of one queue to complete (the first one's queue names the keys; at least one). */
  readonly msgs: ReadonlyArray<TaskMessage>
  readonly nowMs: number
  /** Most tasks to lease from the same queue afterwards (>= 1). */
  readonly count: number
  /** The leases' score: the lease expiry in unix seconds, or the dequeue call's own score (`leaseScore`, releaseLeases.ts). */
  readonly leaseScore: string | number
}

export interface CompleteAndLeaseResult {
  readonly completions: CompleteBatchOutcomes
  /** The lease part, exactly as a dequeueLease call replies (read it with that call's decoder). */
  readonly leaseReply: unknown
}

/**
 * Script `completeAndLease`: completeBatch then dequeueLease of one queue, in one call (read with
 * buffers: the leased messages are protobuf bytes). `nowMs` is also the clock of the queue's
 * flow-control limit for the lease part.
 */
export const completeAndLeaseScript = defineScript<CompleteAndLeaseInput, CompleteAndLeaseResult>({
  name: "completeAndLease",
  source: completeAndLeaseLua,
  buffers: true,
  keys: ({ msgs, nowMs }) => {
    const k = queueKeys(msgs[0]!.queue)
    return completionLockKeys(msgs, [
      k.active,
      k.lease,
      k.completed,
      k.taskPrefix,
      k.processed(nowMs),
      k.processedTotal,
      k.pending,
      k.paused
    ])
  },
  args: ({ msgs, nowMs, count, leaseScore }) =>
    completionArgs([statsExpireAt(nowMs), leaseScore, count, nowMs], msgs, nowMs),
  decode: (reply, { msgs }) => {
    if (!Array.isArray(reply) || reply.length !== 2)
      return Result.fail(unexpectedReply("completeAndLease", reply, "an array of two arrays"))
    return Result.map(completionOutcomes("completeAndLease", reply[0], msgs), (completions) => ({
      completions,
      leaseReply: reply[1] as unknown
    }))
  }
})

/** What a dequeueLease call riding along leases (dequeueLeaseCall says it): its queue, count and lease score. */
export interface RidingLease {
  readonly queue: string
  readonly count: number
  readonly leaseScore: string | number
}
