import * as Effect from "effect/Effect"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { deleteAggregationSet, readAggregationSet } from "../../src/steps/aggregationSet.js"
import { checkGroups } from "../../src/steps/checkGroups.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { reclaimStaleAggregationSets } from "../../src/steps/reclaimStaleAggregationSets.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"

/** The one task a group's tasks are combined into (enqueued to the group's queue unless options say otherwise). */
export interface AggregatedTask {
  readonly type: string
  readonly payload: unknown
  readonly options?: Omit<EnqueueOptions, "group">
}

/** asynq's GroupAggregator: combines the tasks of a ready group into one task. */
export type GroupAggregator = (group: string, tasks: ReadonlyArray<TaskMessage>) => AggregatedTask | Promise<AggregatedTask>

export interface AggregationConfig {
  readonly aggregator: GroupAggregator
  /** A group is ready when its newest task is this old (asynq's GroupGracePeriod; default 60 s). */
  readonly gracePeriodMs?: number
  /** ... or its oldest task is this old (0 = no limit, the default). */
  readonly maxDelayMs?: number
  /** ... or it holds this many tasks (0 = no limit, the default). */
  readonly maxSize?: number
}

export interface AggregateSummary {
  /** Stale sets (their aggregator died) put back into their groups. */
  readonly reclaimed: number
  /** Aggregated tasks enqueued. */
  readonly enqueued: number
  /** Group tasks consumed by those. */
  readonly tasks: number
}

/** Aggregator threw: the set stays and goes back to its group after its deadline. */
const callAggregator = (agg: GroupAggregator, group: string, msgs: ReadonlyArray<TaskMessage>) =>
  Effect.tryPromise({
    try: async () => agg(group, msgs),
    catch: (e) => new Error(`aggregator failed for group "${group}": ${e instanceof Error ? e.message : String(e)}`)
  })

/**
 * One aggregation pass over each queue: reclaim stale sets, move ready groups into sets (atomic,
 * so two overlapping passes never take the same task), and for each set enqueue the aggregate,
 * then delete the set.
 */
export const aggregateGroups = Effect.fn("Adapters.aggregateGroups")(function* (queues: ReadonlyArray<string>, config: AggregationConfig) {
  let reclaimed = 0
  let enqueued = 0
  let tasks = 0
  for (const queue of queues) {
    reclaimed += (yield* reclaimStaleAggregationSets({ queue })).reclaimed
    const { sets } = yield* checkGroups({
      queue,
      gracePeriodMs: config.gracePeriodMs ?? 60_000,
      maxDelayMs: config.maxDelayMs ?? 0,
      maxSize: config.maxSize ?? 0
    })
    for (const set of sets) {
      const id = { queue, group: set.group, setId: set.setId }
      const { msgs } = yield* readAggregationSet(id)
      if (msgs.length > 0) {
        const task = yield* callAggregator(config.aggregator, set.group, msgs)
        yield* enqueue(task.type, task.payload, { queue, ...task.options })
        enqueued++
        tasks += msgs.length
      }
      yield* deleteAggregationSet(id)
    }
  }
  return { reclaimed, enqueued, tasks } satisfies AggregateSummary as AggregateSummary
})
