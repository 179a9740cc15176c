import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { reclaimStaleAggregationSetsScript } from "../broker/aggregate.js"
import { runScript } from "../broker/script.js"
import { wholeAtLeast } from "./validate.js"

/** Which queue's stale aggregation sets to put back, and how many at most. */
export interface ReclaimOptions {
  readonly queue: string
  /** At most this many sets per call (default 100). */
  readonly batch?: number
}

/** Aggregation sets past their deadline (the aggregating process died) go back into their groups. */
export const reclaimStaleAggregationSets = Effect.fn("Steps.reclaimStaleAggregationSets")(function* (
  options: ReclaimOptions
) {
  const batch = yield* wholeAtLeast("batch", options.batch ?? 100, 1)
  const now = yield* Clock.currentTimeMillis
  const r = yield* runScript(reclaimStaleAggregationSetsScript, { queue: options.queue, nowMs: now, batch })
  return { reclaimed: r.sets, tasks: r.tasks }
})
