import { queueKeys } from "../wire/keys.js"
import { stringsReply } from "./decode.js"
import { defineScript } from "./script.js"
import { extendLeaseLua } from "../redis/lua.generated.js"

export interface ExtendLeaseInput {
  readonly queue: string
  /** At least one id. */
  readonly ids: ReadonlyArray<string>
  readonly expiresAtSec: number
}

/** Script `extendLease`: moves the lease of the given ids to `expiresAtSec`; returns the ids still held. */
export const extendLeaseScript = defineScript<ExtendLeaseInput, ReadonlyArray<string>>({
  name: "extendLease",
  source: extendLeaseLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).lease],
  args: ({ ids, expiresAtSec }) => [expiresAtSec, ...ids],
  decode: (reply) => stringsReply("extendLease", reply)
})
