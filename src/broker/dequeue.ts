import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asIdBytesPairs, type IdAndBytes } from "./replies.js"

/**
 * Script `dequeue`: pops up to `count` tasks of one queue into active under a lease expiring at
 * `leaseExpiresAtSec` (nothing when the queue is paused). Returns the raw messages; a pair with
 * `bytes` undefined is a dangling id the script already removed.
 */
export const dequeueFromQueue = Effect.fnUntraced(function* (queue: string, count: number, leaseExpiresAtSec: number) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* redis.scriptBuffer("dequeue", [k.pending, k.paused, k.active, k.lease, k.taskPrefix], [leaseExpiresAtSec, count])
  return (yield* asIdBytesPairs("dequeue", reply)) as ReadonlyArray<IdAndBytes>
})
