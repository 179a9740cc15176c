/**
 * Aggregator (asynq's, every 7 s or the grace period if shorter; only with a groupAggregator):
 * runs the `aggregate` step over each of the server's queues. A group whose aggregator throws is
 * logged; its set goes back to the group after its deadline, so no task is lost.
 */
import { Effect } from "effect"
import { aggregate } from "../steps/aggregate.js"
import type { GroupAggregator, ResolvedOptions } from "./options.js"
import { periodic } from "./periodic.js"

export const aggregateOnce = Effect.fn("Processor.aggregateOnce")(function* (options: ResolvedOptions, aggregator: GroupAggregator) {
  let enqueued = 0
  for (const queue of options.queueNames) {
    const r = yield* aggregate({
      queue,
      aggregator,
      gracePeriodMs: options.groupGracePeriodMs,
      maxDelayMs: options.groupMaxDelayMs,
      maxSize: options.groupMaxSize
    })
    for (const f of r.failed) yield* Effect.logError(f.error)
    enqueued += r.enqueued
  }
  return enqueued
})

export const aggregatorLoop = (options: ResolvedOptions, aggregator: GroupAggregator) =>
  periodic("aggregator", options.groupCheckIntervalMs, aggregateOnce(options, aggregator))
