import { Clock, Effect } from "effect"
import { janitorScript } from "../broker/janitor.js"
import { runScript } from "../broker/script.js"
import { wholeAtLeast } from "./validate.js"

export interface JanitorOptions {
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per queue per call (default 100). */
  readonly batch?: number
}

/** Deletes completed tasks whose retention ended. One script call per queue. */
export const janitor = Effect.fn("Steps.janitor")(function* (options: JanitorOptions) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const byQueue: Record<string, number> = {}
  let deleted = 0
  for (const queue of options.queues) {
    const n = yield* runScript(janitorScript, { queue, nowMs: now, batch })
    byQueue[queue] = (byQueue[queue] ?? 0) + n
    deleted += n
  }
  return { deleted, byQueue: byQueue as Readonly<Record<string, number>> }
})
