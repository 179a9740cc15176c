import { Effect } from "effect"
import { queueExists } from "../broker/queues.js"
import { QueueNotFound } from "./errors.js"

/** Fails with QueueNotFound unless the queue is in `asynq:queues` (asynq's rule for "exists"). */
export const requireQueue = Effect.fn("Inspector.requireQueue")(function* (queue: string) {
  if (!(yield* queueExists(queue))) return yield* new QueueNotFound({ queue, message: `queue "${queue}" does not exist` })
})
