import * as Effect from "effect/Effect"
import { listQueues } from "../broker/queues.js"

/** Every queue name in `asynq:queues`, sorted. */
export const queues = Effect.fn("Inspector.queues")(function* () {
  return [...(yield* listQueues())].sort()
})
