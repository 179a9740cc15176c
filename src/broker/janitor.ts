import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asInteger } from "./replies.js"
import { unixSeconds } from "./time.js"

/** Script `deleteExpiredCompleted`: deletes up to `batch` completed tasks of one queue whose retention ended. */
export const deleteExpiredCompleted = Effect.fn("Broker.deleteExpiredCompleted")(function* (queue: string, nowMs: number, batch: number) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  return yield* asInteger("deleteExpiredCompleted", yield* redis.script("deleteExpiredCompleted", [k.completed, k.taskPrefix], [unixSeconds(nowMs), batch]))
})
