import type { TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { doneOr, doneOrAlreadyDone } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { defineScript } from "./script.js"
import { unixNanosString } from "./time.js"
import { requeueLua } from "../redis/lua.generated.js"

export interface RequeueInput {
  readonly msg: TaskMessage
  readonly nowMs: number
}

/** Script `requeue`: active -> head of pending. LeaseLost when the task is no longer active. */
export const requeueScript = defineScript<RequeueInput, void, LeaseLost>({
  name: "requeue",
  source: requeueLua,
  buffers: false,
  keys: ({ msg }) => {
    const k = queueKeys(msg.queue)
    return [k.active, k.lease, k.pending, k.taskPrefix]
  },
  args: ({ msg, nowMs }) => [msg.id, unixNanosString(nowMs)],
  decode: (reply, { msg }) => doneOr("requeue", reply, msg, undefined, doneOrAlreadyDone)
})
