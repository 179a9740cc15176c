/**
 * Aggregator (asynq's, every 7 s or the grace period if shorter; only with a groupAggregator):
 * per queue, puts back stale aggregation sets, then moves each ready group into a set, calls the
 * user's aggregator with its tasks, enqueues the one task it returns to the group's queue, and
 * deletes the set. If the aggregator throws, the set stays and goes back to its group after its
 * deadline, so no task is lost.
 */
import { Effect } from "effect"
import { deleteAggregationSet, readAggregationSet } from "../steps/aggregationSet.js"
import { checkGroups } from "../steps/checkGroups.js"
import { enqueue } from "../steps/enqueue.js"
import { reclaimStaleAggregationSets } from "../steps/reclaimStaleAggregationSets.js"
import { errorText } from "./errors.js"
import type { GroupAggregator, ResolvedOptions } from "./options.js"
import { periodic } from "./periodic.js"
import { publishWake } from "./wake.js"

const aggregateQueue = Effect.fn("Processor.aggregateQueue")(function* (options: ResolvedOptions, aggregator: GroupAggregator, queue: string) {
  yield* reclaimStaleAggregationSets({ queue })
  const { sets } = yield* checkGroups({
    queue,
    gracePeriodMs: options.groupGracePeriodMs,
    maxDelayMs: options.groupMaxDelayMs,
    maxSize: options.groupMaxSize
  })
  let enqueued = 0
  for (const set of sets) {
    const id = { queue, group: set.group, setId: set.setId }
    const content = yield* readAggregationSet(id)
    if (content.msgs.length === 0) {
      yield* deleteAggregationSet(id)
      continue
    }
    const aggregated = yield* Effect.tryPromise({
      try: async () => aggregator(set.group, content.msgs),
      catch: (e) => new Error(`groupAggregator failed for group "${set.group}" of queue "${queue}": ${errorText(e)}`)
    }).pipe(Effect.tapError((e) => Effect.logError(e.message)), Effect.option)
    if (aggregated._tag === "None") continue
    yield* enqueue(aggregated.value.type, aggregated.value.payload, { ...aggregated.value.options, queue })
    yield* deleteAggregationSet(id)
    enqueued++
  }
  if (enqueued > 0) yield* publishWake([queue])
  return enqueued
})

export const aggregateOnce = Effect.fn("Processor.aggregateOnce")(function* (options: ResolvedOptions, aggregator: GroupAggregator) {
  let enqueued = 0
  for (const queue of options.queueNames) enqueued += yield* aggregateQueue(options, aggregator, queue)
  return enqueued
})

export const aggregatorLoop = (options: ResolvedOptions, aggregator: GroupAggregator) =>
  periodic("aggregator", options.groupCheckIntervalMs, aggregateOnce(options, aggregator))
