import * as Effect from "effect/Effect"
import { cancelChannel } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/**
 * Asks every server (Go asynq or ours) running the task to cancel it: PUBLISH asynq:cancel <id>.
 * Returns how many subscribers got the message.
 */
export const publishCancel = Effect.fn("Steps.publishCancel")(function* (taskId: string) {
  const { redis } = yield* Broker
  return yield* redis.use("publish cancel", (c) => c.publish(cancelChannel, taskId))
})
