import type { TaskMessage } from "../wire/TaskMessage.js"
import { limitKeyHeader, queueKeys } from "../wire/keys.js"
import { doneOr, doneOrAlreadyDone } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { defineScript } from "./script.js"
import { unixNanosString } from "./time.js"
import { requeueLua } from "../redis/lua.generated.js"

export interface RequeueInput {
  readonly msg: TaskMessage
  readonly nowMs: number
}

/** Script `requeue`: active -> head of pending (a task with a limit key: head of its key's line). LeaseLost when the task is no longer active. */
export const requeueScript = defineScript<RequeueInput, void, LeaseLost>({
  name: "requeue",
  source: requeueLua,
  buffers: false,
  keys: ({ msg }) => {
    const k = queueKeys(msg.queue)
    return [k.active, k.lease, k.pending, k.taskPrefix]
  },
  args: ({ msg, nowMs }) => {
    const limitKey = msg.headers[limitKeyHeader]
    return limitKey === undefined ? [msg.id, unixNanosString(nowMs)] : [msg.id, unixNanosString(nowMs), limitKey]
  },
  decode: (reply, { msg }) => doneOr("requeue", reply, msg, undefined, doneOrAlreadyDone)
})
