/** Script `workflowStart`: the idempotent start of a workflow execution (see lua/workflowStart.lua). */
import * as Result from "effect/Result"
import { workflowStartLua } from "../redis/lua.generated.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { arrayReply, unexpectedReply } from "./decode.js"
import type { InvalidState } from "./errors.js"
import { codeError } from "./replyCodes.js"
import { defineScript } from "./script.js"
import type { NextRun } from "./workflowWake.js"

/** A start: the execution, its encoded payload and parent, and its first run. */
export interface WorkflowStartInput extends NextRun {
  readonly executionId: string
  readonly workflow: string
  readonly payload: string
  /** JSON `{"workflow","executionId"}` of the parent execution, or "" for none. */
  readonly parent: string
  /** The version recorded with the execution (read by its runs), or "" for none. */
  readonly version?: string | undefined
}

/** What a start found: a new execution, or the state of the existing one. */
export type WorkflowStartReply =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Exists"; readonly state: string; readonly result: string; readonly failed: boolean }

/** Script `workflowStart`. InvalidState when the id belongs to another workflow's execution. */
export const workflowStartScript = defineScript<WorkflowStartInput, WorkflowStartReply, InvalidState>({
  name: "workflowStart",
  source: workflowStartLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.queue)
    return [workflowExecutionKey(i.queue, i.executionId), k.taskPrefix, k.pending]
  },
  args: (i) => [i.workflow, i.payload, i.parent, i.runId, i.runMessage, i.pendingSince, i.queue, i.version ?? ""],
  decode: (reply, i) =>
    Result.flatMap(
      arrayReply("workflowStart", reply),
      (r): Result.Result<WorkflowStartReply, InvalidState | ReturnType<typeof unexpectedReply>> => {
        const code = r[0]
        if (code === 1) return Result.succeed({ _tag: "Started" })
        if (code === 2)
          return Result.succeed({ _tag: "Exists", state: String(r[1]), result: String(r[2]), failed: r[3] === "1" })
        if (code === -1)
          return Result.fail(
            codeError("workflowStart", -1, { executionId: i.executionId, workflow: i.workflow, other: String(r[1]) })!
          )
        return Result.fail(unexpectedReply("workflowStart", reply, "{1}, {2, state, result, failed} or {-1, name}"))
      }
    )
})
