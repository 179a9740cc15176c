import * as Effect from "effect/Effect"
import { aggregate, type AggregateFailure, type GroupAggregator } from "../../src/steps/aggregate.js"

export type { AggregatedTask, GroupAggregator } from "../../src/steps/aggregate.js"

export interface AggregationConfig {
  readonly aggregator: GroupAggregator
  /** A group is ready when its newest task is this old (asynq's GroupGracePeriod; default 60 s). */
  readonly gracePeriodMs?: number
  /** ... or its oldest task is this old (0 = no limit, the default). */
  readonly maxDelayMs?: number
  /** ... or it holds this many tasks (0 = no limit, the default). */
  readonly maxSize?: number
  /** Groups checked per queue per tick, drawn at random (default: the tick's `batch`, 100). */
  readonly maxGroups?: number
}

export interface AggregateSummary {
  /** Stale sets (their aggregator died or failed) put back into their groups. */
  readonly reclaimed: number
  /** Aggregated tasks enqueued. */
  readonly enqueued: number
  /** Group tasks consumed by those. */
  readonly tasks: number
  /** Groups whose aggregator threw: their tasks stay and return to the group after the set's deadline. */
  readonly failed: ReadonlyArray<AggregateFailure & { readonly queue: string }>
}

/** The `aggregate` step over each queue, summed (the same step the server's aggregator loop runs). */
export const aggregateGroups = Effect.fn("Adapters.aggregateGroups")(function* (queues: ReadonlyArray<string>, config: AggregationConfig) {
  let reclaimed = 0
  let enqueued = 0
  let tasks = 0
  const failed: Array<AggregateFailure & { readonly queue: string }> = []
  for (const queue of queues) {
    const r = yield* aggregate({ queue, ...config })
    reclaimed += r.reclaimed
    enqueued += r.enqueued
    tasks += r.tasks
    for (const f of r.failed) failed.push({ queue, ...f })
  }
  return { reclaimed, enqueued, tasks, failed } satisfies AggregateSummary as AggregateSummary
})
