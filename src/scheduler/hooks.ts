/** Pre- and post-enqueue hooks (asynq's PreEnqueueFunc / PostEnqueueFunc). */
import type { Effect } from "effect"
import type { DuplicateTask, InvalidArgument, TaskIdConflict } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import type { TaskInfo } from "../steps/taskInfo.js"
import type { Entry } from "./entry.js"

/** An occurrence about to be enqueued. */
export interface EnqueueAttempt {
  readonly entry: Entry
  /** The occurrence (the time the cron spec names), not the time of the enqueue. */
  readonly scheduledAt: Date
}

/** What happened to an occurrence this instance handled. */
export type EnqueueResult = EnqueueAttempt &
  (
    | { readonly outcome: "enqueued"; readonly task: TaskInfo }
    /** The task's uniqueness lock was held: no task written (the occurrence counts as handled). */
    | { readonly outcome: "duplicate"; readonly error: DuplicateTask }
    /** The entry's fixed task id is still taken: no task written (the occurrence counts as handled). */
    | { readonly outcome: "conflict"; readonly error: TaskIdConflict }
    /** Redis failed or the options were rejected at enqueue time: not handled, a later tick may retry it. */
    | { readonly outcome: "failed"; readonly error: RedisError | InvalidArgument }
  )

/** asynq's PreEnqueueFunc and PostEnqueueFunc, as Effects. */
export interface SchedulerHooks {
  /**
   * Called before this instance tries to enqueue an occurrence (on every instance that tries, as
   * none knows yet which will win). Failing skips the occurrence on this instance.
   */
  readonly preEnqueue?: ((attempt: EnqueueAttempt) => Effect.Effect<void, unknown>) | undefined
  /**
   * Called once per occurrence this instance handled: enqueued, refused by a uniqueness lock or task
   * id, or failed. Not called when another instance (or an overlapping tick) had already handled it.
   * A failure of the hook is logged and ignored.
   */
  readonly postEnqueue?: ((result: EnqueueResult) => Effect.Effect<void, unknown>) | undefined
}
