import { Effect } from "effect"
import { listQueues } from "../broker/queues.js"

/** Every queue name in `asynq:queues`, sorted. */
export const queues = Effect.fn("Inspector.queues")(function* () {
  return [...(yield* listQueues())].sort()
})
