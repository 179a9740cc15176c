/**
 * Recoverer (asynq's, every minute and once at start): tasks whose lease expired more than
 * `leaseGraceMs` ago (their worker died or lost Redis) go to retry, with the server's retry
 * delay, or to the archive when no retries are left, with the error "asynq: task lease expired".
 */
import { Effect } from "effect"
import { leaseExpiredError, recover } from "../steps/recover.js"
import { defaultRetryDelayMs } from "../steps/retryDelay.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { ResolvedOptions } from "./options.js"
import { periodic } from "./periodic.js"
import { makeTask } from "./Task.js"

const noWriter = { taskId: "", write: () => Promise.reject(new Error("a recovered task has no result writer")) }

export const recoverOnce = Effect.fn("Processor.recoverOnce")(function* (options: ResolvedOptions) {
  // The step wants a synchronous delay; draw the default's random part now, once per call.
  const fallback = yield* defaultRetryDelayMs(0)
  const jitterSec = fallback / 1000 - 15
  const retryDelayMs = (msg: TaskMessage) => {
    if (options.retryDelay) {
      const d = options.retryDelay(msg.retried, new Error(leaseExpiredError), makeTask(msg, new Date(0), { ...noWriter, taskId: msg.id }))
      if (Number.isFinite(d) && d >= 0) return d
    }
    return (msg.retried ** 4 + 15 + jitterSec * (msg.retried + 1)) * 1000
  }
  const r = yield* recover({ queues: options.queueNames, retryDelayMs, graceMs: options.leaseGraceMs })
  if (r.retried + r.archived + r.corrupt.length > 0) {
    yield* Effect.logWarning(`recovered tasks with an expired lease: ${r.retried} to retry, ${r.archived} archived, ${r.corrupt.length} corrupt`)
  }
  return r
})

export const recovererLoop = (options: ResolvedOptions) => periodic("recoverer", options.recovererIntervalMs, recoverOnce(options))
