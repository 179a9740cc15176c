import { Clock, Effect } from "effect"
import { completeActive } from "../broker/complete.js"
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
  return { outcome: yield* completeActive(msg, now) } satisfies CompleteResult as CompleteResult
})
