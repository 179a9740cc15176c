import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type CompleteOutcome, completeScript } from "../broker/complete.js"
import { type CompleteAndLeaseResult, completeAndLeaseScript, type RidingLease } from "../broker/completeAndLease.js"
import { completeBatchScript } from "../broker/completeBatch.js"
import { type BoundScript, bindScript, runScript, runScriptsAlong } from "../broker/script.js"
import type { LeaseLost } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

/** Whether a completed task was deleted or kept (with `retention`). */
export interface CompleteResult {
  /** "deleted": the task is gone; "completed": kept for `msg.retention` seconds in the completed set. */
  readonly outcome: "deleted" | "completed"
}

/**
 * Finishes a task that succeeded: deleted, or kept as completed when it has a retention; its
 * uniqueness lock is released (if it still holds this task); counted as processed. Fails with
 * LeaseLost when the task is no longer active (its lease expired and it was recovered).
 */
export const complete = Effect.fn("Steps.complete")(function* (msg: TaskMessage) {
  const now = yield* Clock.currentTimeMillis
  return { outcome: yield* runScript(completeScript, { msg, nowMs: now }) } satisfies CompleteResult as CompleteResult
})

const deletedResult: CompleteResult = { outcome: "deleted" }
const completedResult: CompleteResult = { outcome: "completed" }

/**
 * `complete` for several tasks in one round trip: one script call per queue (completeBatch: the
 * processed counters bumped once per queue and batch; `complete` for a queue with one task). Each task gets its own result, in argument
 * order: its CompleteResult, LeaseLost, or the RedisError of its queue's call (or of the round trip).
 * `extra` script calls of other steps ride along in the same round trip (read with buffers);
 * `extra` in the answer holds their replies. `leases[e]` says what `extra[e]` leases when it is a
 * dequeueLease call (dequeueLeaseCall's `lease`): a lease of a queue completed here goes in that
 * queue's call.
 */
export const completeMany = (
  msgs: ReadonlyArray<TaskMessage>,
  extra: ReadonlyArray<ScriptCall> = [],
  leases: ReadonlyArray<RidingLease | undefined> = [],
  /** Called once the batch is handed to the connection, before its replies (see `ScriptBatchOptions.onSent`). */
  onSent?: () => void
) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    // Tasks grouped by queue, keeping each task's index (one group in the common case).
    const groups = new Map<string, { msgs: Array<TaskMessage>; at: Array<number> }>()
    msgs.forEach((msg, i) => {
      const g = groups.get(msg.queue)
      if (g) {
        g.msgs.push(msg)
        g.at.push(i)
      } else groups.set(msg.queue, { msgs: [msg], at: [i] })
    })
    const batches = [...groups.values()]
    // A dequeueLease riding along for a queue completed here goes in that queue's call (completeAndLease):
    // one script call instead of two (at concurrency 1, one call per task). Not one that reads its
    // messages with SORT (ScriptCall.sorted): it goes in its own MULTI after the batch.
    let merged:
      | {
          readonly batch: number
          readonly extraAt: number
          readonly count: number
          readonly leaseScore: string | number
        }
      | undefined
    for (let e = 0; e < extra.length && merged === undefined; e++) {
      const lease = leases[e]
      const g = lease && extra[e]!.sorted === undefined && groups.get(lease.queue)
      if (lease && g)
        merged = { batch: batches.indexOf(g), extraAt: e, count: lease.count, leaseScore: lease.leaseScore }
    }
    type Outcome = ReadonlyArray<Result.Result<CompleteOutcome, LeaseLost>> | CompleteOutcome | CompleteAndLeaseResult
    const sent = runScriptsAlong<Outcome, LeaseLost>(
      batches.map(
        (g, b): BoundScript<Outcome, LeaseLost> =>
          merged?.batch === b
            ? bindScript(completeAndLeaseScript, {
                msgs: g.msgs,
                nowMs: now,
                count: merged.count,
                leaseScore: merged.leaseScore
              })
            : g.msgs.length === 1
              ? bindScript(completeScript, { msg: g.msgs[0]!, nowMs: now })
              : // A queue with one task uses `complete` itself (the batch script's bookkeeping costs Redis more for one).
                bindScript(completeBatchScript, { msgs: g.msgs, nowMs: now })
      ),
      merged ? extra.filter((_, e) => e !== merged!.extraAt) : extra,
      onSent
    )
    return Effect.map(sent, (r) => {
      const toResult = (o: CompleteOutcome) => (o === "deleted" ? deletedResult : completedResult)
      const results: Array<Result.Result<CompleteResult, LeaseLost | RedisError>> = new Array(msgs.length)
      batches.forEach((g, b) => {
        let outcome = r.outcomes[b]!
        if (Result.isSuccess(outcome) && typeof outcome.success === "object" && "completions" in outcome.success)
          outcome = Result.succeed(outcome.success.completions)
        g.at.forEach((i, j) => {
          if (Result.isFailure(outcome)) results[i] = outcome as Result.Result<never, LeaseLost | RedisError>
          else if (typeof outcome.success === "string") results[i] = Result.succeed(toResult(outcome.success))
          else
            results[i] = Result.map(
              (outcome.success as ReadonlyArray<Result.Result<CompleteOutcome, LeaseLost>>)[j]!,
              toResult
            )
        })
      })
      let extraReplies = r.extra
      if (merged) {
        const combined = r.outcomes[merged.batch]!
        const reply: BatchReply = Result.isSuccess(combined)
          ? { ok: true, value: (combined.success as CompleteAndLeaseResult).leaseReply }
          : { ok: false, error: combined.failure as RedisError }
        extraReplies = [...r.extra.slice(0, merged.extraAt), reply, ...r.extra.slice(merged.extraAt)]
      }
      return { results, extra: extraReplies } as {
        readonly results: ReadonlyArray<Result.Result<CompleteResult, LeaseLost | RedisError>>
        readonly extra: ReadonlyArray<BatchReply>
      }
    })
  })
