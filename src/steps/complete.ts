import { Clock, Effect, Result } from "effect"
import { completeScript } from "../broker/complete.js"
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
 * `complete` for several tasks in one round trip. Each task gets its own result, in argument
 * order: its CompleteResult, LeaseLost, or the RedisError of its call (or of the round trip).
 * `extra` script calls of other steps ride along in the same round trip (read with buffers);
 * `extra` in the answer holds their replies.
 */
export const completeMany = Effect.fn("Steps.completeMany")(function* (msgs: ReadonlyArray<TaskMessage>, extra: ReadonlyArray<ScriptCall> = []) {
  const now = yield* Clock.currentTimeMillis
  const r = yield* runScriptsAlong(
    msgs.map((msg) => bindScript(completeScript, { msg, nowMs: now })),
    extra
  )
  return {
    results: r.outcomes.map(Result.map((outcome) => (outcome === "deleted" ? deletedResult : completedResult))),
    extra: r.extra
  } as {
    readonly results: ReadonlyArray<Result.Result<CompleteResult, LeaseLost | RedisError>>
    readonly extra: ReadonlyArray<BatchReply>
  }
})
