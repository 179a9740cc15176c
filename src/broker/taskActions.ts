/** The inspector's per-task actions: run (-> pending), archive, delete a task in any state but active. */
import * as Result from "effect/Result"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { unexpectedReply } from "./decode.js"
import type { InvalidState, TaskNotFound } from "./errors.js"
import { textField } from "./fields.js"
import { archiveCutoffSeconds, archiveMaxSize } from "./archive.js"
import { codeError } from "./replyCodes.js"
import { defineScript } from "./script.js"
import { unixNanosString, unixSeconds } from "./time.js"
import { inspector_archiveTaskLua, inspector_deleteTaskLua, inspector_runTaskLua } from "../redis/lua.generated.js"

/** What a per-task action did: the state the task left. */
export interface TaskActionResult {
  readonly id: string
  readonly from: TaskState
}

export interface TaskActionInput {
  readonly queue: string
  readonly id: string
  readonly nowMs: number
}

type ActionScript = "inspector_runTask" | "inspector_archiveTask" | "inspector_deleteTask"

/** `{code, state}`: 1 done (state = the state left), other codes per the reply-code table. */
const actionDecode =
  (script: ActionScript) =>
  (
    reply: unknown,
    { queue, id }: TaskActionInput
  ): Result.Result<TaskActionResult, TaskNotFound | InvalidState | ReturnType<typeof unexpectedReply>> => {
    if (!(Array.isArray(reply) && reply.length === 2 && typeof reply[0] === "number"))
      return Result.fail(unexpectedReply(script, reply, "{code, state}"))
    const code: number = reply[0]
    const state = textField(reply[1]) ?? ""
    if (code === 1) return Result.succeed({ id, from: state as TaskState })
    const error = codeError(script, code, { queue, id, state })
    return Result.fail(error ?? unexpectedReply(script, reply, "{code, state} with code 1, 0 or -1"))
  }

/** Script `inspector_runTask`: scheduled, retry, archived, completed or aggregating -> pending. */
export const runTaskScript = defineScript<TaskActionInput, TaskActionResult, TaskNotFound | InvalidState>({
  name: "inspector_runTask",
  source: inspector_runTaskLua,
  buffers: false,
  keys: ({ queue, id }) => {
    const k = queueKeys(queue)
    return [k.task(id), k.prefix, k.pending, k.allGroups]
  },
  args: ({ id, nowMs }) => [id, unixNanosString(nowMs)],
  decode: actionDecode("inspector_runTask")
})

/** Script `inspector_archiveTask`: pending, scheduled, retry, completed or aggregating -> archived (trimming the archive). */
export const archiveTaskScript = defineScript<TaskActionInput, TaskActionResult, TaskNotFound | InvalidState>({
  name: "inspector_archiveTask",
  source: inspector_archiveTaskLua,
  buffers: false,
  keys: ({ queue, id }) => {
    const k = queueKeys(queue)
    return [k.task(id), k.prefix, k.archived, k.allGroups, k.taskPrefix]
  },
  args: ({ id, nowMs }) => [
    id,
    unixSeconds(nowMs),
    archiveCutoffSeconds(nowMs),
    archiveMaxSize,
    unixNanosString(nowMs)
  ],
  decode: actionDecode("inspector_archiveTask")
})

/** Script `inspector_deleteTask`: deletes a task in any state but active, releasing its uniqueness lock. */
export const deleteTaskScript = defineScript<TaskActionInput, TaskActionResult, TaskNotFound | InvalidState>({
  name: "inspector_deleteTask",
  source: inspector_deleteTaskLua,
  buffers: false,
  keys: ({ queue, id }) => {
    const k = queueKeys(queue)
    return [k.task(id), k.prefix, k.allGroups, k.uniquePrefix]
  },
  args: ({ id, nowMs }) => [id, unixNanosString(nowMs)],
  decode: actionDecode("inspector_deleteTask")
})
