import { Effect } from "effect"
import { pause, unpause } from "../steps/pause.js"
import { publishCancel } from "../broker/publishCancel.js"
import { requireQueue } from "./requireQueue.js"

/**
 * Pauses a queue (asynq's PauseQueue): workers stop taking its tasks. QueueNotFound for a queue
 * never used (a typo must not look done), InvalidState when already paused. The `pause` step itself
 * does not check, for pipelines that pause a queue before its first task.
 */
export const pauseQueue = Effect.fn("Inspector.pauseQueue")(function* (queue: string) {
  yield* requireQueue(queue)
  yield* pause(queue)
})

/** Resumes a paused queue (asynq's UnpauseQueue). QueueNotFound, or InvalidState when it is not paused. */
export const unpauseQueue = Effect.fn("Inspector.unpauseQueue")(function* (queue: string) {
  yield* requireQueue(queue)
  yield* unpause(queue)
})

/**
 * Asks the server running a task to cancel it (asynq's CancelProcessing): best effort, it only
 * says how many servers received the signal (0 when none listens).
 */
export const cancelProcessing = Effect.fn("Inspector.cancelProcessing")(function* (taskId: string) {
  const receivers = yield* publishCancel(taskId)
  return { receivers }
})
