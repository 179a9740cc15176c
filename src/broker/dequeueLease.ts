import { queueKeys } from "../wire/keys.js"
import { type IdAndBytes, idBytesPairsReply } from "./decode.js"
import { defineScript } from "./script.js"
import { dequeueLeaseLua } from "../redis/lua.generated.js"

export interface DequeueLeaseInput {
  readonly queue: string
  readonly count: number
  readonly leaseExpiresAtSec: number
  /** The score the leases get (default `leaseExpiresAtSec`): see `leaseScore` (releaseLeases.ts). */
  readonly leaseScore?: string
  /**
   * The calling worker parks on the queue when the call comes back short (lua/dequeueLease.lua):
   * its server id and the park token (a lease score of its own, see `leaseScore`).
   */
  readonly park?: { readonly server: string; readonly token: string } | undefined
}

/**
 * Script `dequeueLease`: pops up to `count` tasks of one queue into active under a lease expiring at
 * `leaseExpiresAtSec` (scored `leaseScore` when given; nothing when the queue is paused). Returns the raw messages; a pair with
 * `bytes` undefined is a dangling id the script already removed.
 */
export const dequeueLeaseScript = defineScript<DequeueLeaseInput, ReadonlyArray<IdAndBytes>>({
  name: "dequeueLease", source: dequeueLeaseLua,
  buffers: true,
  keys: ({ queue, park }) => {
    const k = queueKeys(queue)
    return park ? [k.pending, k.paused, k.active, k.lease, k.taskPrefix, k.parked, k.parkRoom] : [k.pending, k.paused, k.active, k.lease, k.taskPrefix]
  },
  args: (i) => (i.park ? [i.leaseScore ?? i.leaseExpiresAtSec, i.count, i.park.server, i.park.token] : [i.leaseScore ?? i.leaseExpiresAtSec, i.count]),
  decode: (reply) => idBytesPairsReply("dequeueLease", reply)
})
