import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { integersReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixNanosString, unixSeconds } from "./time.js"
import { forwardLua } from "../redis/lua.generated.js"

export interface ForwardInput {
  readonly queue: string
  readonly nowMs: number
  readonly batch: number
}

/** Script `forward`: due scheduled/retry tasks of one queue -> pending (or their group), at most `batch`. */
export const forwardScript = defineScript<ForwardInput, { readonly scheduled: number; readonly retry: number; readonly dropped: number }>({
  name: "forward", source: forwardLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.scheduled, k.retry, k.pending, k.taskPrefix, k.groupPrefix, k.allGroups]
  },
  args: ({ nowMs, batch }) => [unixSeconds(nowMs), unixNanosString(nowMs), batch],
  decode: (reply) => Result.map(integersReply("forward", reply, 3), ([scheduled, retry, dropped]) => ({ scheduled: scheduled!, retry: retry!, dropped: dropped! }))
})
