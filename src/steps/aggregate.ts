/**
 * One aggregation pass over a queue (asynq's aggregator): put back stale aggregation sets, move
 * every ready group into a set (atomic, so two overlapping passes never take the same task), and
 * for each set call the user's aggregator, enqueue the one task it returns to the group's queue,
 * then delete the set. The server's aggregator loop and the serverless maintenance tick both run
 * this step.
 *
 * If the aggregator throws for a group, that set stays in Redis and goes back to its group once
 * its deadline passes (reclaimStaleAggregationSets), so no task is lost; the failure is reported
 * in `failed` and the other groups go on.
 */
import * as Effect from "effect/Effect"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { deleteAggregationSet, readAggregationSet } from "./aggregationSet.js"
import { checkGroups } from "./checkGroups.js"
import { enqueue } from "./enqueue.js"
import type { EnqueueOptions } from "./options.js"
import { reclaimStaleAggregationSets } from "./reclaimStaleAggregationSets.js"

/** The one task a ready group is combined into (always enqueued to the group's queue, as asynq). */
export interface AggregatedTask {
  readonly type: string
  readonly payload?: unknown
  readonly options?: Omit<EnqueueOptions, "group" | "queue">
}

/** asynq's GroupAggregator: combines the tasks of a ready group into one task. */
export type GroupAggregator = (
  group: string,
  tasks: ReadonlyArray<TaskMessage>
) => AggregatedTask | Promise<AggregatedTask>

/** Settings of one aggregation pass over a queue: the aggregator and when a group is ready. */
export interface AggregateOptions {
  readonly queue: string
  readonly aggregator: GroupAggregator
  /** A group is ready when its newest task is this old (asynq's GroupGracePeriod; default 60 s). */
  readonly gracePeriodMs?: number
  /** ... or its oldest task is this old (0 = no limit, the default). */
  readonly maxDelayMs?: number
  /** ... or it holds this many tasks (0 = no limit, the default); one set takes at most this many. */
  readonly maxSize?: number
  /** Check at most this many groups per call, drawn at random (default: all; see checkGroups). */
  readonly maxGroups?: number
}

/** A group whose aggregator failed; its tasks return to the group after the set's deadline. */
export interface AggregateFailure {
  readonly group: string
  readonly error: string
}

/** What one aggregation pass did: sets reclaimed, aggregated tasks enqueued, groups that failed. */
export interface AggregateResult {
  /** Stale sets (their aggregating process died or failed) put back into their groups. */
  readonly reclaimed: number
  /** Aggregated tasks enqueued. */
  readonly enqueued: number
  /** Group tasks consumed by those. */
  readonly tasks: number
  /** Groups whose aggregator threw (their tasks stay and come back after the set's deadline). */
  readonly failed: ReadonlyArray<AggregateFailure>
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** One whole aggregation pass over a queue: reclaim stale sets, check the groups, call the aggregator per ready group, enqueue its task and delete the set. */
export const aggregate = Effect.fn("Steps.aggregate")(function* (options: AggregateOptions) {
  const { queue, aggregator } = options
  const { reclaimed } = yield* reclaimStaleAggregationSets({ queue })
  const { sets } = yield* checkGroups({
    queue,
    gracePeriodMs: options.gracePeriodMs ?? 60_000,
    maxDelayMs: options.maxDelayMs ?? 0,
    maxSize: options.maxSize ?? 0,
    ...(options.maxGroups === undefined ? {} : { maxGroups: options.maxGroups })
  })
  let enqueued = 0
  let tasks = 0
  const failed: Array<AggregateFailure> = []
  for (const set of sets) {
    const id = { queue, group: set.group, setId: set.setId }
    const { msgs } = yield* readAggregationSet(id)
    if (msgs.length > 0) {
      const made = yield* Effect.tryPromise({
        try: async () => aggregator(set.group, msgs),
        catch: errorText
      }).pipe(Effect.result)
      if (made._tag === "Failure") {
        failed.push({
          group: set.group,
          error: `aggregator failed for group "${set.group}" of queue "${queue}": ${made.failure}`
        })
        continue
      }
      yield* enqueue(made.success.type, made.success.payload, { ...made.success.options, queue })
      enqueued++
      tasks += msgs.length
    }
    yield* deleteAggregationSet(id)
  }
  return { reclaimed, enqueued, tasks, failed } satisfies AggregateResult as AggregateResult
})
