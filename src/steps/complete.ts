import { Clock, Effect, Result } from "effect"
import { type CompleteOutcome, completeScript } from "../broker/complete.js"
import { completeBatchScript } from "../broker/completeBatch.js"
import { bindScript, runScript, runScriptsAlong } from "../broker/script.js"
import type { LeaseLost } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

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
 * `extra` in the answer holds their replies.
 */
export const completeMany = Effect.fnUntraced(function* (msgs: ReadonlyArray<TaskMessage>, extra: ReadonlyArray<ScriptCall> = []) {
  const now = yield* Clock.currentTimeMillis
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
  // A queue with one task uses `complete` itself (the batch script's bookkeeping costs Redis more for one).
  const r = yield* runScriptsAlong<ReadonlyArray<Result.Result<CompleteOutcome, LeaseLost>> | CompleteOutcome, LeaseLost>(
    batches.map((g) =>
      g.msgs.length === 1 ? bindScript(completeScript, { msg: g.msgs[0]!, nowMs: now }) : bindScript(completeBatchScript, { msgs: g.msgs, nowMs: now })
    ),
    extra
  )
  const toResult = (o: CompleteOutcome) => (o === "deleted" ? deletedResult : completedResult)
  const results: Array<Result.Result<CompleteResult, LeaseLost | RedisError>> = new Array(msgs.length)
  batches.forEach((g, b) => {
    const outcome = r.outcomes[b]!
    g.at.forEach((i, j) => {
      if (Result.isFailure(outcome)) results[i] = outcome as Result.Result<never, LeaseLost | RedisError>
      else if (typeof outcome.success === "string") results[i] = Result.succeed(toResult(outcome.success))
      else results[i] = Result.map(outcome.success[j]!, toResult)
    })
  })
  return { results, extra: r.extra } as {
    readonly results: ReadonlyArray<Result.Result<CompleteResult, LeaseLost | RedisError>>
    readonly extra: ReadonlyArray<BatchReply>
  }
})
