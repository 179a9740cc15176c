import { queueKeys } from "../wire/keys.js"
import { integerReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixSeconds } from "./time.js"
import { janitorLua } from "../redis/lua.generated.js"

export interface JanitorInput {
  readonly queue: string
  readonly nowMs: number
  readonly batch: number
}

/** Script `janitor`: deletes up to `batch` completed tasks of one queue whose retention ended; returns how many. */
export const janitorScript = defineScript<JanitorInput, number>({
  name: "janitor",
  source: janitorLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.completed, k.taskPrefix]
  },
  args: ({ nowMs, batch }) => [unixSeconds(nowMs), batch],
  decode: (reply) => integerReply("janitor", reply)
})
