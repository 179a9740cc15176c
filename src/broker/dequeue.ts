import { Effect } from "effect"
import type { ScriptCall } from "../redis/Redis.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import type { RedisError } from "../redis/errors.js"
import { asIdBytesPairs, type IdAndBytes } from "./replies.js"

/**
 * Script `dequeue`: pops up to `count` tasks of one queue into active under a lease expiring at
 * `leaseExpiresAtSec` (nothing when the queue is paused). Returns the raw messages; a pair with
 * `bytes` undefined is a dangling id the script already removed.
 */
export const dequeueFromQueue = Effect.fnUntraced(function* (queue: string, count: number, leaseExpiresAtSec: number) {
  const { redis } = yield* Broker
  const call = dequeueCall(queue, count, leaseExpiresAtSec)
  return yield* dequeueReply(yield* redis.scriptBuffer("dequeue", call.keys, call.args))
})

/** The `dequeue` script call (to send in a batch, with buffers). */
export const dequeueCall = (queue: string, count: number, leaseExpiresAtSec: number): ScriptCall => {
  const k = queueKeys(queue)
  return { script: "dequeue", keys: [k.pending, k.paused, k.active, k.lease, k.taskPrefix], args: [leaseExpiresAtSec, count] }
}

/** The `dequeue` script's reply (read with buffers) as id, bytes pairs. */
export const dequeueReply = (reply: unknown) => asIdBytesPairs("dequeue", reply) as Effect.Effect<ReadonlyArray<IdAndBytes>, RedisError>
