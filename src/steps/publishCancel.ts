import { Effect } from "effect"
import { publishCancelMessage } from "../broker/publishCancel.js"

/** Asks every server (Go asynq or ours) running the task to cancel it. Returns how many subscribers got the message. */
export const publishCancel = Effect.fn("Steps.publishCancel")(function* (taskId: string) {
  return yield* publishCancelMessage(taskId)
})
