import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asStrings } from "./replies.js"

/** Script `extendLease`: moves the lease of the given ids to `expiresAtSec`; returns the ids still held. */
export const extendLeases = Effect.fnUntraced(function* (queue: string, ids: ReadonlyArray<string>, expiresAtSec: number) {
  if (ids.length === 0) return [] as ReadonlyArray<string>
  const { redis } = yield* Broker
  const reply = yield* redis.script("extendLease", [queueKeys(queue).lease], [expiresAtSec, ...ids])
  return yield* asStrings("extendLease", reply)
})
