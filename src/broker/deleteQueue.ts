import * as Result from "effect/Result"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { integersReply, unexpectedReply } from "./decode.js"
import type { InvalidState, QueueNotEmpty } from "./errors.js"
import { codeError } from "./replyCodes.js"
import { defineScript } from "./script.js"
import { inspector_deleteQueueLua } from "../redis/lua.generated.js"

export interface RemoveQueueInput {
  readonly queue: string
  readonly force: boolean
  readonly batch: number
  /** Tasks deleted by the earlier calls (for the error message). */
  readonly done: number
}

/**
 * Script `inspector_deleteQueue`: removes a queue's keys, deleting at most `batch` tasks per call
 * when forced. `{ removed: true, deleted }` when done; `{ removed: false, left }` when a batch
 * was deleted and more remain (call again); `{ removed: false, left: 0, namesLeft }` when every task
 * is deleted and a batch of the queue's per-key names (limit keys, keep-last keys) was, more
 * remaining (call again). QueueNotEmpty (not forced) or InvalidState (active tasks).
 */
export type RemoveQueueStep =
  | { readonly removed: true; readonly deleted: number }
  | { readonly removed: false; readonly left: number; readonly namesLeft?: number }

export const deleteQueueScript = defineScript<RemoveQueueInput, RemoveQueueStep, QueueNotEmpty | InvalidState>({
  name: "inspector_deleteQueue",
  source: inspector_deleteQueueLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [
      k.pending,
      k.active,
      k.scheduled,
      k.retry,
      k.archived,
      k.completed,
      k.lease,
      k.allGroups,
      k.allAggregationSets,
      k.paused,
      k.taskPrefix,
      k.groupPrefix,
      k.uniquePrefix,
      k.parked,
      k.parkRoom,
      k.dueMs,
      k.handover,
      k.flow,
      k.limitKeys,
      k.keyIndex
    ]
  },
  args: ({ force, batch }) => [force ? "1" : "0", batch],
  decode: (reply, { queue, done }) =>
    Result.flatMap(
      integersReply("inspector_deleteQueue", reply, 2),
      ([code, n]): Result.Result<RemoveQueueStep, QueueNotEmpty | InvalidState | RedisError> => {
        if (code === 1) return Result.succeed({ removed: true as const, deleted: n! })
        if (code === 0) return Result.succeed({ removed: false as const, left: n! })
        if (code === 2) return Result.succeed({ removed: false as const, left: 0, namesLeft: n! })
        const error = codeError("inspector_deleteQueue", code!, { queue, count: n!, done })
        return Result.fail(
          error ?? unexpectedReply("inspector_deleteQueue", reply, "{code, count} with code 1, 0, 2, -1 or -2")
        )
      }
    )
})
