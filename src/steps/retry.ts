import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { retryScript } from "../broker/retry.js"
import { runScript } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

/** When to retry a failed task, the error to store, and whether it counts as a failure. */
export interface RetryOptions {
  /** When the task becomes due again (ms). */
  readonly retryAtMs: number
  readonly errorMsg: string
  /** asynq's IsFailure: true counts the attempt (retried + 1, processed and failed counters). */
  readonly isFailure: boolean
  /**
   * The time of the failure (ms; default: now). A caller that sends the same retry again after a
   * lost reply passes the same time, so the resend carries the same message and the script
   * recognises its own earlier move (answered as done, not as a lost lease).
   */
  readonly atMs?: number
}

/** The message as asynq stores it on retry: retried + 1 only for a failure; error and time always. */
export const retriedMessage = (msg: TaskMessage, errorMsg: string, isFailure: boolean, nowMs: number): TaskMessage => ({
  ...msg,
  retried: isFailure ? msg.retried + 1 : msg.retried,
  errorMsg,
  lastFailedAt: unixSeconds(nowMs)
})

/** Moves an active task that failed to the retry set, due at `retryAtMs`. Fails with LeaseLost when it is no longer active. */
export const retry = Effect.fn("Steps.retry")(function* (msg: TaskMessage, options: RetryOptions) {
  const now = options.atMs ?? (yield* Clock.currentTimeMillis)
  yield* runScript(retryScript, {
    updated: retriedMessage(msg, options.errorMsg, options.isFailure, now),
    retryAtMs: options.retryAtMs,
    isFailure: options.isFailure,
    nowMs: now
  })
})
