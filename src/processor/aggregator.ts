/**
 * Group aggregation: the aggregate pass (the `aggregate` step over each queue, summed; what the
 * Server's aggregator and the maintenance tick run) and the Server's aggregator loop (asynq's,
 * every 7 s or the grace period if shorter; only with a groupAggregator), which logs the groups
 * whose aggregator threw. Such a group's set goes back to the group after its deadline, so no task
 * is lost. A queue whose pass fails is reported in `failedQueues`; the other queues go on.
 */
import * as Effect from "effect/Effect"
import { aggregate, type AggregateFailure, type AggregateOptions, type GroupAggregator } from "../steps/aggregate.js"
import { type QueueFailure, queueFailures } from "../steps/queueFailures.js"
import type { ResolvedOptions } from "./options.js"
import { logQueueFailures, periodic } from "./periodic.js"

export type { AggregatedTask, GroupAggregator } from "../steps/aggregate.js"

/** How groups are aggregated: the aggregate step's options for any queue (the maintenance tick's `maxGroups` default is its `batch`). */
export type AggregationConfig = Omit<AggregateOptions, "queue">

export interface AggregatePassOptions extends AggregationConfig {
  readonly queues: ReadonlyArray<string>
}

/** What one aggregate pass did. */
export interface AggregateSummary {
  /** Stale sets (their aggregator died or failed) put back into their groups. */
  readonly reclaimed: number
  /** Aggregated tasks enqueued. */
  readonly enqueued: number
  /** Group tasks consumed by those. */
  readonly tasks: number
  /** Groups whose aggregator threw: their tasks stay and return to the group after the set's deadline. */
  readonly failed: ReadonlyArray<AggregateFailure & { readonly queue: string }>
  /** Queues whose pass failed (e.g. Redis refused one of their keys): the other queues were aggregated. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

export const aggregatePass = Effect.fn("Processor.aggregatePass")(function* (options: AggregatePassOptions) {
  const { queues, ...config } = options
  let reclaimed = 0
  let enqueued = 0
  let tasks = 0
  const failed: Array<AggregateFailure & { readonly queue: string }> = []
  const failures = queueFailures<Effect.Error<ReturnType<typeof aggregate>>>()
  for (const queue of queues) {
    const r = yield* failures.isolate(queue, aggregate({ queue, ...config }))
    if (r === undefined) continue
    reclaimed += r.reclaimed
    enqueued += r.enqueued
    tasks += r.tasks
    for (const f of r.failed) failed.push({ queue, ...f })
  }
  yield* failures.unlessAllFailed(queues)
  return {
    reclaimed,
    enqueued,
    tasks,
    failed,
    failedQueues: failures.failedQueues
  } satisfies AggregateSummary as AggregateSummary
})

export const aggregatorLoop = (options: ResolvedOptions, aggregator: GroupAggregator) =>
  periodic(
    "aggregator",
    options.groupCheckIntervalMs,
    aggregatePass({
      queues: options.queueNames,
      aggregator,
      gracePeriodMs: options.groupGracePeriodMs,
      maxDelayMs: options.groupMaxDelayMs,
      maxSize: options.groupMaxSize
    }).pipe(
      Effect.tap((r) => Effect.forEach(r.failed, (f) => Effect.logError(f.error), { discard: true })),
      Effect.tap((r) => logQueueFailures("aggregating groups", r.failedQueues))
    )
  )
