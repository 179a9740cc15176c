import * as Effect from "effect/Effect"
import { publishCancel } from "../broker/publishCancel.js"

/** Pausing and resuming a queue are the steps themselves (one name through the layers). */
export { pauseQueue, unpauseQueue } from "../steps/pauseQueue.js"

/** Setting and clearing a queue's flow-control limit are the steps themselves. */
export { clearQueueLimit, getQueueFlow, getQueueLimit, setQueueLimit } from "../steps/queueLimit.js"

/**
 * Asks the server running a task to cancel it (asynq's CancelProcessing): best effort, it only
 * says how many servers received the signal (0 when none listens).
 */
export const cancelProcessing = Effect.fn("Inspector.cancelProcessing")(function* (taskId: string) {
  const receivers = yield* publishCancel(taskId)
  return { receivers }
})
