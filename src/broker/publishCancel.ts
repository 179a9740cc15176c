import { Effect } from "effect"
import { cancelChannel } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/** PUBLISH asynq:cancel <id>: every server subscribed cancels the task if it runs it. Returns the receiver count. */
export const publishCancelMessage = Effect.fn("Broker.publishCancel")(function* (taskId: string) {
  const { redis } = yield* Broker
  return yield* redis.use("publish cancel", (c) => c.publish(cancelChannel, taskId))
})
