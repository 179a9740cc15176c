import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asIdBytesPairs } from "./replies.js"

/** Script `listLeaseExpired`: up to `batch` tasks of one queue whose lease score is <= `cutoffSec`. */
export const listLeaseExpired = Effect.fn("Broker.listLeaseExpired")(function* (queue: string, cutoffSec: number, batch: number) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  return yield* asIdBytesPairs("listLeaseExpired", yield* redis.scriptBuffer("listLeaseExpired", [k.lease, k.taskPrefix], [cutoffSec, batch]))
})
