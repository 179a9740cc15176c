import * as Result from "effect/Result"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { coded, unexpectedReply } from "./decode.js"
import type { TaskIdConflict } from "./errors.js"
import { defineScript } from "./script.js"
import { unixMsString } from "./time.js"
import { enqueueDebouncedLua } from "../redis/lua.generated.js"

/** A debounced enqueue's write: the task, its debounce key, when it is due and how long the key lives. */
export interface DebouncedWrite {
  readonly msg: TaskMessage
  readonly key: string
  /** Now + the window, unix ms. */
  readonly processAtMs: number
  readonly keyTtlMs: number
}

/** Script `enqueueDebounced`: a new scheduled task, replacing the key's earlier one while that is still scheduled. Resolves with whether it replaced one. */
export const enqueueDebouncedScript = defineScript<DebouncedWrite, boolean, TaskIdConflict>({
  name: "enqueueDebounced",
  source: enqueueDebouncedLua,
  buffers: false,
  keys: ({ msg, key }) => {
    const k = queueKeys(msg.queue)
    return [k.taskPrefix, k.scheduled, k.debounce(key)]
  },
  args: ({ msg, processAtMs, keyTtlMs }) => [
    msg.id,
    bytesArg(encodeTaskMessage(msg)),
    unixMsString(processAtMs),
    msg.queue,
    Math.max(1, Math.ceil(keyTtlMs))
  ],
  decode: (reply, w) => {
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== "number")
      return Result.fail(unexpectedReply("enqueueDebounced", reply, "an array of two integers"))
    const replaced = reply[1] === 1
    return Result.map(coded("enqueueDebounced", reply[0], { msg: w.msg }, [1]), () => replaced)
  }
})
