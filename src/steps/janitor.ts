import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { janitorScript } from "../broker/janitor.js"
import { runScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import { type QueueFailure, queueFailures } from "./queueFailures.js"
import { wholeAtLeast } from "./validate.js"

/** Settings of a janitor pass: the queues, and the most tasks deleted per queue. */
export interface JanitorOptions {
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per queue per call (default 100). */
  readonly batch?: number
}

/** What a janitor pass deleted, per queue, and which queues failed. */
export interface JanitorResult {
  /** Task hashes deleted, all queues. */
  readonly deleted: number
  readonly byQueue: Readonly<Record<string, number>>
  /** Queues that could not be cleaned in this call (the others were); not in `byQueue`. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

/**
 * Deletes completed tasks whose retention ended. One script call per queue; a queue that fails is
 * reported in `failedQueues` and the others are still cleaned (the call fails only when every
 * queue failed).
 */
export const janitor = Effect.fn("Steps.janitor")(function* (options: JanitorOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const byQueue: Record<string, number> = {}
  let deleted = 0
  const failures = queueFailures<RedisError>()
  for (const queue of options.queues) {
    const n = yield* failures.isolate(queue, runScript(janitorScript, { queue, nowMs: now, batch }))
    if (n === undefined) continue
    byQueue[queue] = (byQueue[queue] ?? 0) + n
    deleted += n
  }
  yield* failures.unlessAllFailed(options.queues)
  return { deleted, byQueue, failedQueues: failures.failedQueues } satisfies JanitorResult as JanitorResult
})
