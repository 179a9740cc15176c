import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { archiveScript } from "../broker/archive.js"
import { runScript } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

export { archiveMaxAgeMs, archiveMaxSize } from "../broker/archive.js"

/** The error to store with an archived task, and the archive's limits (age and size). */
export interface ArchiveOptions {
  readonly errorMsg: string
  /** Archived tasks older than this are deleted (default 90 days). */
  readonly maxAgeMs?: number
  /** At most this many archived tasks are kept, the newest (default 10,000). */
  readonly maxSize?: number
  /** The time of the failure (ms; default: now): pass the same time when sending the same archive again (see RetryOptions.atMs). */
  readonly atMs?: number
}

/** The message as asynq stores it on archive: error and time set, retried unchanged. */
export const archivedMessage = (msg: TaskMessage, errorMsg: string, nowMs: number): TaskMessage => ({
  ...msg,
  errorMsg,
  lastFailedAt: unixSeconds(nowMs)
})

/**
 * Moves an active task that failed for good (no retries left, or SkipRetry) to the archive,
 * counted as processed and failed, then trims the archive. Returns how many old archived tasks
 * were deleted. Fails with LeaseLost when the task is no longer active.
 */
export const archive = Effect.fn("Steps.archive")(function* (msg: TaskMessage, options: ArchiveOptions) {
  const now = options.atMs ?? (yield* Clock.currentTimeMillis)
  const r = yield* runScript(archiveScript, {
    updated: archivedMessage(msg, options.errorMsg, now),
    nowMs: now,
    ...(options.maxAgeMs !== undefined ? { maxAgeMs: options.maxAgeMs } : {}),
    ...(options.maxSize !== undefined ? { maxSize: options.maxSize } : {})
  })
  return { trimmed: r.trimmed }
})
