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
}

/**
 * Moves scheduled and retry tasks that are due to pending (grouped tasks back into their group).
 * One script call per queue; a queue that fails is reported in `failedQueues` and the others are
 * still forwarded (the call fails only when every queue failed).
 */
export const forward = Effect.fn("Steps.forward")(function* (options: ForwardOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const byQueue: Record<string, number> = {}
  const more: Array<string> = []
  let moved = 0
  const failures = queueFailures<RedisError>()
  for (const queue of options.queues) {
    const r = yield* failures.isolate(queue, runScript(forwardScript, { queue, nowMs: now, batch }))
    if (r === undefined) continue
    const n = r.scheduled + r.retry
    byQueue[queue] = (byQueue[queue] ?? 0) + n
    moved += n
    if (n + r.dropped >= batch) more.push(queue)
  }
  yield* failures.unlessAllFailed(options.queues)
  return { moved, byQueue, more, failedQueues: failures.failedQueues } satisfies ForwardResult as ForwardResult
})
