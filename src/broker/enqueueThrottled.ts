import * as Result from "effect/Result"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { coded, unexpectedReply } from "./decode.js"
import type { TaskIdConflict } from "./errors.js"
import { utf8Text } from "./fields.js"
import { defineScript } from "./script.js"
import { unixNanosString } from "./time.js"
import { enqueueThrottledLua } from "../redis/lua.generated.js"

/** A throttled enqueue's write: the task (for the pending list), its throttle key and window. */
export interface ThrottledWrite {
  readonly msg: TaskMessage
  readonly nowMs: number
  readonly key: string
  readonly windowMs: number
}

/** What a throttled enqueue did: enqueued this task, or throttled it (the id of the task its window let through). */
export type ThrottledOutcome =
  | { readonly throttled: false }
  | { readonly throttled: true; readonly windowTaskId: string }

/** Script `enqueueThrottled`: a new pending task unless its throttle key let one through in its window. */
export const enqueueThrottledScript = defineScript<ThrottledWrite, ThrottledOutcome, TaskIdConflict>({
  name: "enqueueThrottled",
  source: enqueueThrottledLua,
  buffers: false,
  keys: ({ msg, key }) => {
    const k = queueKeys(msg.queue)
    return [k.taskPrefix, k.pending, k.throttle(key)]
  },
  args: ({ msg, nowMs, windowMs }) => [
    msg.id,
    bytesArg(encodeTaskMessage(msg)),
    unixNanosString(nowMs),
    msg.queue,
    Math.max(1, Math.ceil(windowMs)),
    Math.floor(nowMs)
  ],
  decode: (reply, w) => {
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== "number")
      return Result.fail(unexpectedReply("enqueueThrottled", reply, "an array of a code and an id"))
    const id: unknown = reply[1]
    const text = typeof id === "string" ? id : id instanceof Uint8Array ? utf8Text(id) : ""
    return Result.map(
      coded("enqueueThrottled", reply[0], { msg: w.msg }, [1, 2]),
      (code): ThrottledOutcome => (code === 2 ? { throttled: true, windowTaskId: text } : { throttled: false })
    )
  }
})
