/**
 * Recovering tasks whose lease expired more than a grace period ago (their worker died or lost
 * Redis): they go to retry, or to the archive when no retries are left, with the error "asynq:
 * task lease expired". The recover pass is what the Server's recoverer and the maintenance tick
 * run; the Server's recoverer loop (asynq's, every minute and once at start) uses the server's
 * retry delay and logs what it recovered.
 */
import { Effect } from "effect"
import { leaseExpiredError, recover } from "../steps/recover.js"
import { defaultRetryDelayMs } from "../steps/retryDelay.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { ResolvedOptions } from "./options.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import { logQueueFailures, periodic } from "./periodic.js"
import { makeTask } from "./Task.js"

export interface RecoverPassOptions {
  readonly queues: ReadonlyArray<string>
  /** Most expired tasks per queue (default 100). */
  readonly batch?: number
  /** Delay before the retry (default asynq's). */
  readonly retryDelayMs?: (msg: TaskMessage) => number
  /** A lease counts as expired this long after its expiry (default 30 000 ms). */
  readonly graceMs?: number
}

/** What one recover pass did. */
export interface RecoverSummary {
  readonly retried: number
  readonly archived: number
  /** Expired tasks whose message was unusable (set aside). */
  readonly corrupt: number
  /** Queues that failed: the others were recovered. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

export const recoverPass = Effect.fn("Processor.recoverPass")(function* (options: RecoverPassOptions) {
  const r = yield* recover(options)
  return { retried: r.retried, archived: r.archived, corrupt: r.corrupt.length, failedQueues: r.failedQueues } satisfies RecoverSummary as RecoverSummary
})

const noWriter = { taskId: "", write: () => Promise.reject(new Error("a recovered task has no result writer")) }

/** The server's retry delay for a recovered task: its `retryDelay`, else asynq's default with one random draw per pass. */
const serverRetryDelay = (options: ResolvedOptions) =>
  Effect.map(defaultRetryDelayMs(0), (fallback) => {
    // The step wants a synchronous delay; the default's random part is drawn now, once per pass.
    const jitterSec = fallback / 1000 - 15
    return (msg: TaskMessage) => {
      if (options.retryDelay) {
        const d = options.retryDelay(msg.retried, new Error(leaseExpiredError), makeTask(msg, new Date(0), { ...noWriter, taskId: msg.id }))
        if (Number.isFinite(d) && d >= 0) return d
      }
      return (msg.retried ** 4 + 15 + jitterSec * (msg.retried + 1)) * 1000
    }
  })

export const recovererLoop = (options: ResolvedOptions) =>
  periodic(
    "recoverer",
    options.recovererIntervalMs,
    serverRetryDelay(options).pipe(
      Effect.flatMap((retryDelayMs) => recoverPass({ queues: options.queueNames, retryDelayMs, graceMs: options.leaseGraceMs })),
      Effect.tap((r) =>
        r.retried + r.archived + r.corrupt > 0
          ? Effect.logWarning(`recovered tasks with an expired lease: ${r.retried} to retry, ${r.archived} archived, ${r.corrupt} corrupt`)
          : Effect.void
      ),
      Effect.tap((r) => logQueueFailures("recovering tasks with an expired lease", r.failedQueues))
    )
  )
