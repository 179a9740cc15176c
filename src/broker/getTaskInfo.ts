import * as Result from "effect/Result"
import { queueKeys, type TaskState, taskStates } from "../wire/keys.js"
import { arrayReply, unexpectedReply } from "./decode.js"
import type { TaskNotFound } from "./errors.js"
import { bytesField, numField, textField } from "./fields.js"
import type { StoredRow } from "./listTasks.js"
import { codeError } from "./replyCodes.js"
import { defineScript } from "./script.js"
import { inspector_getTaskInfoLua } from "../redis/lua.generated.js"

/** Script `inspector_getTaskInfo`: one task's stored fields and state; TaskNotFound when it does not exist. */
export const getTaskInfoScript = defineScript<
  { readonly queue: string; readonly id: string },
  StoredRow & { readonly state: TaskState },
  TaskNotFound
>({
  name: "inspector_getTaskInfo",
  source: inspector_getTaskInfoLua,
  buffers: true,
  keys: ({ queue, id }) => {
    const k = queueKeys(queue)
    return [k.task(id), k.prefix]
  },
  args: ({ id }) => [id],
  decode: (raw, { queue, id }) => {
    if (raw === null) return Result.fail(codeError("inspector_getTaskInfo", 0, { queue, id })!)
    return Result.flatMap(arrayReply("inspector_getTaskInfo", raw), (reply) => {
      const key = queueKeys(queue).task(id)
      const state = textField(reply[1]) ?? ""
      if (!(taskStates as ReadonlyArray<string>).includes(state))
        return Result.fail(
          unexpectedReply("inspector_getTaskInfo", raw, `a task state (task hash ${key} has state "${state}")`)
        )
      return Result.succeed({
        key,
        msg: bytesField(reply[0]),
        state: state as TaskState,
        score: numField(reply[2]),
        result: bytesField(reply[3])
      })
    })
  }
})
