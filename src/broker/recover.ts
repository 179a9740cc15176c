import { queueKeys } from "../wire/keys.js"
import { type IdAndBytes, idBytesPairsReply } from "./decode.js"
import { defineScript } from "./script.js"
import { listLeaseExpiredLua } from "../redis/lua.generated.js"

export interface ListLeaseExpiredInput {
  readonly queue: string
  readonly cutoffSec: number
  readonly batch: number
}

/** Script `listLeaseExpired` (recover's read): up to `batch` tasks of one queue whose lease score is <= `cutoffSec`. */
export const listLeaseExpiredScript = defineScript<ListLeaseExpiredInput, ReadonlyArray<IdAndBytes>>({
  name: "listLeaseExpired",
  source: listLeaseExpiredLua,
  buffers: true,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.lease, k.taskPrefix]
  },
  args: ({ cutoffSec, batch }) => [cutoffSec, batch],
  decode: (reply) => idBytesPairsReply("listLeaseExpired", reply)
})
