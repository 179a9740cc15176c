import { Clock, Effect } from "effect"
import { forwardScript } from "../broker/forward.js"
import { runScript } from "../broker/script.js"
import { wholeAtLeast } from "./validate.js"

export interface ForwardOptions {
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per queue per call (default 100). */
  readonly batch?: number
}

export interface ForwardResult {
  /** Tasks moved to pending (or back into their group), all queues. */
  readonly moved: number
  readonly byQueue: Readonly<Record<string, number>>
  /** Queues that had more due tasks than `batch` may still have some: call again. */
  readonly more: ReadonlyArray<string>
}

/** Moves scheduled and retry tasks that are due to pending (grouped tasks back into their group). One script call per queue. */
export const forward = Effect.fn("Steps.forward")(function* (options: ForwardOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const byQueue: Record<string, number> = {}
  const more: Array<string> = []
  let moved = 0
  for (const queue of options.queues) {
    const r = yield* runScript(forwardScript, { queue, nowMs: now, batch })
    const n = r.scheduled + r.retry
    byQueue[queue] = (byQueue[queue] ?? 0) + n
    moved += n
    if (n + r.dropped >= batch) more.push(queue)
  }
  return { moved, byQueue, more } satisfies ForwardResult as ForwardResult
})
