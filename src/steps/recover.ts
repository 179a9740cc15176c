import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { archiveScript } from "../broker/archive.js"
import type { RedisError } from "../redis/errors.js"
import { listLeaseExpiredScript } from "../broker/recover.js"
import { retryScript } from "../broker/retry.js"
import { runScript } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { archivedMessage } from "./archive.js"
import { type CorruptTask, decodeStored, setAsideCorrupt } from "./corrupt.js"
import { type QueueFailure, queueFailures } from "./queueFailures.js"
import { retriedMessage } from "./retry.js"
import { defaultRetryDelayMs } from "./retryDelay.js"
import { durationAtLeast, wholeAtLeast } from "./validate.js"

/** The error recorded on a task whose lease ran out (asynq's ErrLeaseExpired). */
export const leaseExpiredError = "asynq: task lease expired"

/** Settings of a recover pass: the queues, the batch, the retry delay and the grace after a lease's expiry. */
export interface RecoverOptions {
  readonly queues: ReadonlyArray<string>
  /** At most this many expired tasks per queue per call (default 100). */
  readonly batch?: number
  /** Delay before the retry (default asynq's n^4 + 15 + rand(30)·(n+1) seconds). */
  readonly retryDelayMs?: (msg: TaskMessage) => number
  /** A lease counts as expired this long after its expiry, for clock skew between hosts (default 30000, asynq's). */
  readonly graceMs?: number
}

/** What a recover pass did: tasks retried, archived, set aside as corrupt, and queues that failed. */
export interface RecoverResult {
  /** Tasks moved to retry (counted as failures: retried + 1). */
  readonly retried: number
  /** Tasks archived because they had no retries left. */
  readonly archived: number
  /** Expired tasks whose message was unusable, archived or dropped. */
  readonly corrupt: ReadonlyArray<CorruptTask>
  /**
   * Queues that could not be recovered (all of their expired tasks) in this call; the other queues
   * were, and what was moved before the failure stays counted.
   */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

/**
 * Takes back tasks whose lease expired (their worker died or stalled): retry with a delay, or
 * archive when retried >= retry, with the error "asynq: task lease expired". Safe to run from
 * several processes at once: a task moves only while its lease is still the expired one. A queue
 * that fails is reported in `failedQueues` and the others are still recovered (the call fails only
 * when every queue failed).
 */
export const recover = Effect.fn("Steps.recover")(function* (options: RecoverOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const graceMs = yield* durationAtLeast("graceMs", options.graceMs ?? 30_000, 0)
  const now = yield* Clock.currentTimeMillis
  const cutoffSec = unixSeconds(now - graceMs)
  const counts = { retried: 0, archived: 0 }
  const corrupt: Array<CorruptTask> = []
  const failures = queueFailures<RedisError>()
  for (const queue of options.queues) {
    yield* failures.isolate(queue, recoverQueue(queue, { ...options, batch, now, cutoffSec }, counts, corrupt))
  }
  yield* failures.unlessAllFailed(options.queues)
  return { ...counts, corrupt, failedQueues: failures.failedQueues } satisfies RecoverResult as RecoverResult
})

/** Recovers one queue's expired tasks, adding to `counts` and `corrupt` as it goes. */
const recoverQueue = Effect.fnUntraced(function* (
  queue: string,
  options: {
    readonly batch: number
    readonly now: number
    readonly cutoffSec: number
    readonly retryDelayMs?: ((msg: TaskMessage) => number) | undefined
  },
  counts: { retried: number; archived: number },
  corrupt: Array<CorruptTask>
) {
  const { batch, now, cutoffSec } = options
  for (const { id, bytes } of yield* runScript(listLeaseExpiredScript, { queue, cutoffSec, batch })) {
    const decoded = decodeStored(queue, id, bytes)
    if (!("msg" in decoded)) {
      const c = yield* setAsideCorrupt(queue, id, decoded.error, { kind: "active" }, now)
      if (c) corrupt.push(c)
      continue
    }
    const msg = decoded.msg
    if (msg.retried >= msg.retry) {
      // LeaseLost: the lease changed since it was listed (re-leased or finished): not ours to move.
      const moved = yield* runScript(archiveScript, {
        updated: archivedMessage(msg, leaseExpiredError, now),
        nowMs: now,
        leaseCutoffSec: cutoffSec
      }).pipe(
        Effect.as(true),
        Effect.catchTag("LeaseLost", () => Effect.succeed(false))
      )
      if (moved) counts.archived++
    } else {
      const delay = options.retryDelayMs ? options.retryDelayMs(msg) : yield* defaultRetryDelayMs(msg.retried)
      const moved = yield* runScript(retryScript, {
        updated: retriedMessage(msg, leaseExpiredError, true, now),
        retryAtMs: now + delay,
        isFailure: true,
        nowMs: now,
        leaseCutoffSec: cutoffSec
      }).pipe(
        Effect.as(true),
        Effect.catchTag("LeaseLost", () => Effect.succeed(false))
      )
      if (moved) counts.retried++
    }
  }
})
