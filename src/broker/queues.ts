/** The queue registry `asynq:queues`: list, check, remove. */
import * as Effect from "effect/Effect"
import { allQueues } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { QueueNotFound } from "./errors.js"

/** Every queue name in `asynq:queues` (unsorted). */
export const listQueues = Effect.fn("Broker.listQueues")(function* () {
  const { redis } = yield* Broker
  return yield* redis.use("smembers asynq:queues", (c) => c.smembers(allQueues))
})

/** Whether the queue is in `asynq:queues` (asynq's rule for "exists"). */
export const queueExists = Effect.fn("Broker.queueExists")(function* (queue: string) {
  const { redis } = yield* Broker
  return (yield* redis.use("sismember asynq:queues", (c) => c.sismember(allQueues, queue))) === 1
})

/** Removes the queue from `asynq:queues`; our next enqueue to it registers it again at once. */
export const unregisterQueue = Effect.fn("Broker.unregisterQueue")(function* (queue: string) {
  const { redis, knownQueues } = yield* Broker
  yield* redis.use("srem asynq:queues", (c) => c.srem(allQueues, queue))
  knownQueues.delete(queue)
})

/** Fails with QueueNotFound unless the queue is in `asynq:queues` (a typo must not look done). */
export const requireQueue = Effect.fn("Broker.requireQueue")(function* (queue: string) {
  if (!(yield* queueExists(queue)))
    return yield* new QueueNotFound({ queue, message: `queue "${queue}" does not exist` })
})
