/**
 * Recovering tasks whose lease expired more than a grace period ago (their worker died or lost
 * Redis): they go to retry, or to the archive when no retries are left, with the error "asynq:
 * task lease expired". The recover pass is what the Server's recoverer and the maintenance tick
 * run; the Server's recoverer loop (once at start, then when the earliest lease + grace of its
 * queues runs out, at most `recovererIntervalMs` apart) uses the server's retry delay and logs what
 * it recovered.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { earliestLeaseExpirySec } from "../broker/earliestLease.js"
import { leaseExpiredError, recover } from "../steps/recover.js"
import { defaultRetryDelayMs } from "../steps/retryDelay.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { ResolvedOptions } from "./options.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import { logQueueFailures, paced, sleepUntilDueMs } from "./periodic.js"
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
  return {
    retried: r.retried,
    archived: r.archived,
    corrupt: r.corrupt.length,
    failedQueues: r.failedQueues
  } satisfies RecoverSummary as RecoverSummary
})

const noWriter = { taskId: "", write: () => Promise.reject(new Error("a recovered task has no result writer")) }

/** The server's retry delay for a recovered task: its `retryDelay`, else asynq's default with one random draw per pass. */
const serverRetryDelay = (options: ResolvedOptions) =>
  Effect.map(defaultRetryDelayMs(0), (fallback) => {
    // The step wants a synchronous delay; the default's random part is drawn now, once per pass.
    const jitterSec = fallback / 1000 - 15
    return (msg: TaskMessage) => {
      if (options.retryDelay) {
        const d = options.retryDelay(
          msg.retried,
          new Error(leaseExpiredError),
          makeTask(msg, new Date(0), { ...noWriter, taskId: msg.id })
        )
        if (Number.isFinite(d) && d >= 0) return d
      }
      return (msg.retried ** 4 + 15 + jitterSec * (msg.retried + 1)) * 1000
    }
  })

/** The recoverer never sleeps less than this between passes (expired leases it could not move do not make it spin). */
export const recovererFloorMs = 1000

/**
 * How long the recoverer sleeps after a pass: until the earliest lease (+ grace) it read runs out,
 * at most `intervalMs` (a lease taken meanwhile is seen within that) and at least the floor (or the
 * interval, when that is shorter). Lease scores are unix seconds: a lease of `s` is recoverable
 * once `now - grace >= s * 1000`.
 */
export const recovererSleepMs = (args: {
  readonly earliestLeaseSec: number | undefined
  readonly graceMs: number
  readonly nowMs: number
  readonly intervalMs: number
}): number => {
  const { earliestLeaseSec, graceMs, nowMs, intervalMs } = args
  const dueAtMs = earliestLeaseSec === undefined ? undefined : earliestLeaseSec * 1000 + graceMs
  return sleepUntilDueMs({ dueAtMs, nowMs, intervalMs, floorMs: recovererFloorMs })
}

/**
 * The earliest lease among `queues` (unix seconds), or undefined when none is leased. A queue whose
 * read fails is left out (the interval still bounds the sleep).
 */
const earliestLeaseAmong = (queues: ReadonlyArray<string>) =>
  Effect.forEach(
    queues,
    (queue) =>
      earliestLeaseExpirySec(queue).pipe(
        Effect.catchTag("RedisError", (e) =>
          Effect.as(
            Effect.logDebug(`recoverer: could not read the earliest lease of queue "${queue}": ${e.message}`),
            undefined
          )
        )
      ),
    { concurrency: "unbounded" }
  ).pipe(
    Effect.map((expiries) => {
      const known = expiries.filter((s): s is number => s !== undefined)
      return known.length === 0 ? undefined : Math.min(...known)
    })
  )

/**
 * The Server's recoverer: a pass at start, then one whenever the earliest lease (+ grace) of its
 * queues runs out, as read after each pass, never more than `recovererIntervalMs` apart (asynq's
 * fixed period, 60 s by default) and never less than a second. Queues the pass could not serve are
 * left out of that read (their next try is at the interval, not in a 1 s loop).
 */
export const recovererLoop = (options: ResolvedOptions) =>
  paced(
    "recoverer",
    options.recovererIntervalMs,
    serverRetryDelay(options).pipe(
      Effect.flatMap((retryDelayMs) =>
        recoverPass({ queues: options.queueNames, retryDelayMs, graceMs: options.leaseGraceMs })
      ),
      Effect.tap((r) =>
        r.retried + r.archived + r.corrupt > 0
          ? Effect.logWarning(
              `recovered tasks with an expired lease: ${r.retried} to retry, ${r.archived} archived, ${r.corrupt} corrupt`
            )
          : Effect.void
      ),
      Effect.tap((r) => logQueueFailures("recovering tasks with an expired lease", r.failedQueues)),
      Effect.flatMap((r) => {
        const failed = new Set(r.failedQueues.map((f) => f.queue))
        return earliestLeaseAmong(options.queueNames.filter((q) => !failed.has(q)))
      }),
      Effect.flatMap((earliestLeaseSec) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) =>
          recovererSleepMs({
            earliestLeaseSec,
            graceMs: options.leaseGraceMs,
            nowMs,
            intervalMs: options.recovererIntervalMs
          })
        )
      )
    )
  )
