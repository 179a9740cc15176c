import { Effect } from "effect"
import { pause, unpause } from "../steps/pause.js"
import { publishCancel } from "../steps/publishCancel.js"

/** Pauses a queue (asynq's PauseQueue): workers stop taking its tasks. InvalidState when already paused. */
export const pauseQueue = Effect.fn("Inspector.pauseQueue")(function* (queue: string) {
  yield* pause(queue)
})

/** Resumes a paused queue (asynq's UnpauseQueue). InvalidState when it is not paused. */
export const unpauseQueue = Effect.fn("Inspector.unpauseQueue")(function* (queue: string) {
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
