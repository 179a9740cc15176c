import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { forwardScript } from "../broker/forward.js"
import { runScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import { type QueueFailure, queueFailures } from "./queueFailures.js"
import { wholeAtLeast } from "./validate.js"

/** Settings of a forward: the queues, and the most tasks moved per queue. */
export interface ForwardOptions {
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per queue per call (default 100). */
  readonly batch?: number
}

/** What a forward moved, per queue, and which queues have more due tasks or failed. */
export interface ForwardResult {
  /** Tasks moved to pending (or back into their group), all queues. */
  readonly moved: number
  readonly byQueue: Readonly<Record<string, number>>
  /** Queues that had more due tasks than `batch` may still have some: call again. */
  readonly more: ReadonlyArray<string>
  /** Queues that could not be forwarded in this call (the others were); not in `byQueue` or `more`. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /**
   * The earliest due time (unix ms) of a task still scheduled or in retry in each queue forwarded,
   * as read after its moves (a queue with none is absent). For tasks written by effect-asynq it is
   * exact to the millisecond; for tasks written by Go asynq it is their whole second.
   */
  readonly nextDueMs: Readonly<Record<string, number>>
}

/**
 * Moves scheduled and retry tasks that are due to pending (grouped tasks back into their group),
 * to the millisecond for tasks effect-asynq wrote (lua/forward.lua), and reads each queue's next due time.
 * One script call per queue; a queue that fails is reported in `failedQueues` and the others are
 * still forwarded (the call fails only when every queue failed).
 */
export const forward = Effect.fn("Steps.forward")(function* (options: ForwardOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const byQueue: Record<string, number> = {}
  const more: Array<string> = []
  const nextDueMs: Record<string, number> = {}
  let moved = 0
  const failures = queueFailures<RedisError>()
  for (const queue of options.queues) {
    const r = yield* failures.isolate(queue, runScript(forwardScript, { queue, nowMs: now, batch }))
    if (r === undefined) continue
    const n = r.scheduled + r.retry
    byQueue[queue] = (byQueue[queue] ?? 0) + n
    moved += n
    if (n + r.dropped >= batch) more.push(queue)
    if (r.nextDueMs !== undefined) nextDueMs[queue] = r.nextDueMs
  }
  yield* failures.unlessAllFailed(options.queues)
  return {
    moved,
    byQueue,
    more,
    failedQueues: failures.failedQueues,
    nextDueMs
  } satisfies ForwardResult as ForwardResult
})
