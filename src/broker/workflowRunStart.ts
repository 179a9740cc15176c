/** Script `workflowRunStart`: a run task of an execution begins (see lua/workflowRunStart.lua). */
import * as Result from "effect/Result"
import { workflowRunStartLua } from "../redis/lua.generated.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { arrayReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"

/** Which run task begins, of which execution. */
export interface WorkflowRunStartInput {
  readonly queue: string
  readonly executionId: string
  readonly runId: string
}

/** The execution hash as a map of its fields. */
export type ExecutionFields = ReadonlyMap<string, string>

/** Whether the run may go (with the execution's fields), or why not. */
export type WorkflowRunStartReply =
  | { readonly _tag: "Run"; readonly fields: ExecutionFields }
  | { readonly _tag: "Complete"; readonly fields: ExecutionFields }
  | { readonly _tag: "Stale" }
  | { readonly _tag: "Missing" }

const fieldsOf = (flat: ReadonlyArray<unknown>): Map<string, string> => {
  const m = new Map<string, string>()
  for (let i = 1; i + 1 < flat.length; i += 2) m.set(String(flat[i]), String(flat[i + 1]))
  return m
}

/** Script `workflowRunStart`. */
export const workflowRunStartScript = defineScript<WorkflowRunStartInput, WorkflowRunStartReply>({
  name: "workflowRunStart",
  source: workflowRunStartLua,
  buffers: false,
  keys: (i) => [workflowExecutionKey(i.queue, i.executionId)],
  args: (i) => [i.runId],
  decode: (reply) =>
    Result.flatMap(
      arrayReply("workflowRunStart", reply),
      (r): Result.Result<WorkflowRunStartReply, ReturnType<typeof unexpectedReply>> => {
        switch (r[0]) {
          case 1:
            return Result.succeed({ _tag: "Run", fields: fieldsOf(r) })
          case 2:
            return Result.succeed({ _tag: "Complete", fields: fieldsOf(r) })
          case 0:
            return Result.succeed({ _tag: "Stale" })
          case -1:
            return Result.succeed({ _tag: "Missing" })
          default:
            return Result.fail(unexpectedReply("workflowRunStart", reply, "{1|2, fields…}, {0} or {-1}"))
        }
      }
    )
})
