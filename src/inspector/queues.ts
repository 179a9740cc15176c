import { Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { allQueues } from "../wire/keys.js"

/** Every queue name in `asynq:queues`, sorted. */
export const queues = Effect.fn("Inspector.queues")(function* () {
  const { redis } = yield* Broker
  const names = yield* redis.use("smembers asynq:queues", (c) => c.smembers(allQueues))
  return names.sort()
})
