import { Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { allQueues } from "../wire/keys.js"
import { QueueNotFound } from "./errors.js"

/** Fails with QueueNotFound unless the queue is in `asynq:queues` (asynq's rule for "exists"). */
export const requireQueue = Effect.fn("Inspector.requireQueue")(function* (queue: string) {
  const { redis } = yield* Broker
  const member = yield* redis.use("sismember asynq:queues", (c) => c.sismember(allQueues, queue))
  if (member !== 1) return yield* new QueueNotFound({ queue, message: `queue "${queue}" does not exist` })
})
