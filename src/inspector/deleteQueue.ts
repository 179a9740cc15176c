import { Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { allQueues, queueKeys } from "../wire/keys.js"
import { defaultBatchSize } from "./bulkActions.js"
import { InvalidState, QueueNotEmpty } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import { asInts } from "./replies.js"
import type { BulkProgress } from "./types.js"

export interface DeleteQueueOptions {
  /** Delete the tasks too (never active ones: the queue must have none). */
  readonly force?: boolean
  readonly batchSize?: number
  readonly onProgress?: (progress: BulkProgress) => void
}

/**
 * Removes a queue (asynq's DeleteQueue): QueueNotEmpty when it holds tasks and `force` is not set;
 * InvalidState while any task is active, forced or not. Forced deletion goes in bounded batches.
 */
export const deleteQueue = Effect.fn("Inspector.deleteQueue")(function* (queue: string, options: DeleteQueueOptions = {}) {
  yield* requireQueue(queue)
  const { redis, knownQueues } = yield* Broker
  const k = queueKeys(queue)
  const keys = [k.pending, k.active, k.scheduled, k.retry, k.archived, k.completed, k.lease, k.allGroups, k.allAggregationSets, k.paused, k.taskPrefix, k.groupPrefix, k.uniquePrefix]
  const batch = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
  let done = 0
  for (;;) {
    const [code, n] = yield* asInts("inspector_removeQueue", yield* redis.script("inspector_removeQueue", keys, [options.force ? "1" : "0", batch]), 2)
    if (code === -2) {
      return yield* new InvalidState({ message: `queue "${queue}" has ${n} active task(s); it cannot be deleted while tasks run${done > 0 ? ` (${done} task(s) were already deleted)` : ""}` })
    }
    if (code === -1) {
      return yield* new QueueNotEmpty({ queue, size: n!, message: `queue "${queue}" is not empty (${n} task(s)); delete its tasks first or force the deletion` })
    }
    if (code === 0) {
      done += batch
      options.onProgress?.({ done, total: done + n! })
      continue
    }
    if (n! > 0) {
      done += n!
      options.onProgress?.({ done, total: done })
    }
    break
  }
  yield* redis.use("srem asynq:queues", (c) => c.srem(allQueues, queue))
  knownQueues.delete(queue) // our next enqueue to it registers it again at once
  return { deletedTasks: done }
})
