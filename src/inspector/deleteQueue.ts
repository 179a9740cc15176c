import * as Effect from "effect/Effect"
import { deleteQueueScript } from "../broker/deleteQueue.js"
import { unregisterQueue } from "../broker/queues.js"
import { runScript } from "../broker/script.js"
import { defaultBatchSize } from "./bulkActions.js"
import { requireQueue } from "../broker/queues.js"
import type { BulkProgress } from "./types.js"

/** Options of `deleteQueue`: whether to delete a queue that still holds tasks, and in which batches. */
export interface DeleteQueueOptions {
  /** Delete the tasks too (never active ones: the queue must have none). */
  readonly force?: boolean
  readonly batchSize?: number
  /** Called after each batch with how many tasks are done of how many. */
  readonly onProgress?: (progress: BulkProgress) => void
}

/**
 * Removes a queue (asynq's DeleteQueue): QueueNotEmpty when it holds tasks and `force` is not set;
 * InvalidState while any task is active, forced or not. Forced deletion goes in bounded batches.
 */
export const deleteQueue = Effect.fn("Inspector.deleteQueue")(function* (
  queue: string,
  options: DeleteQueueOptions = {}
) {
  yield* requireQueue(queue)
  const batch = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
  let done = 0
  for (;;) {
    const r = yield* runScript(deleteQueueScript, { queue, force: options.force === true, batch, done })
    if (!r.removed && r.namesLeft !== undefined) continue
    if (!r.removed) {
      done += batch
      options.onProgress?.({ done, total: done + r.left })
      continue
    }
    if (r.deleted > 0) {
      done += r.deleted
      options.onProgress?.({ done, total: done })
    }
    break
  }
  yield* unregisterQueue(queue)
  return { deletedTasks: done }
})
