/** Script `workflowWake`: records a fact for an execution and wakes it (see lua/workflowWake.lua). */
import * as Result from "effect/Result"
import { workflowWakeLua } from "../redis/lua.generated.js"
import type { ScriptArg } from "../redis/Redis.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"

/** The run task a script enqueues when the execution needs a run: its id and encoded message. */
export interface NextRun {
  readonly queue: string
  readonly runId: string
  readonly runMessage: ScriptArg
  /** pending_since (unix nanoseconds) of that task. */
  readonly pendingSince: string
}

/** A wake: the fact to record first (or none) and the kind of wake. */
export interface WorkflowWakeInput extends NextRun {
  readonly executionId: string
  /** The hash field to set if absent (`d:<deferred name>`, `interrupt`, …), or "" for a plain wake. */
  readonly field: string
  readonly value: string
  /** "a": an automatic wake (skips a SuspendOnFailure execution); "e": explicit (resume, interrupt). */
  readonly mode: "a" | "e"
}

/** What a wake did. */
export type WorkflowWakeOutcome = "already-set" | "recorded" | "run-enqueued"

/** Script `workflowWake`. */
export const workflowWakeScript = defineScript<WorkflowWakeInput, WorkflowWakeOutcome>({
  name: "workflowWake",
  source: workflowWakeLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.queue)
    return [workflowExecutionKey(i.queue, i.executionId), k.taskPrefix, k.pending]
  },
  args: (i) => [i.field, i.value, i.mode, i.runId, i.runMessage, i.pendingSince, i.queue],
  decode: (reply) =>
    Result.flatMap(integerReply("workflowWake", reply), (n) =>
      n === 0
        ? Result.succeed("already-set" as const)
        : n === 1
          ? Result.succeed("recorded" as const)
          : n === 2
            ? Result.succeed("run-enqueued" as const)
            : Result.fail(unexpectedReply("workflowWake", n, "0, 1 or 2"))
    )
})
