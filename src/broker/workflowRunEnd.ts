/** Script `workflowRunEnd`: a run of an execution ends, complete or suspended (see lua/workflowRunEnd.lua). */
import * as Result from "effect/Result"
import { workflowRunEndLua } from "../redis/lua.generated.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import type { NextRun } from "./workflowWake.js"

/** The end of a run: its outcome and result, and the next run should a wake have come meanwhile. */
export interface WorkflowRunEndInput extends NextRun {
  readonly executionId: string
  /** The ending run task's id. */
  readonly endingRunId: string
  readonly outcome: "complete" | "suspended"
  readonly result: string
  /** Suspended by SuspendOnFailure. */
  readonly failed: boolean
  /** Keep a complete execution this long (ms); 0: until deleted. */
  readonly retentionMs: number
  /** Suspended: the names of the deferreds the run waits on (recorded for the inspector; none when left out). */
  readonly waiting?: ReadonlyArray<string> | undefined
}

/** What the end did: recorded; recorded and the next run enqueued (a wake came during the run); or nothing (a leftover run). */
export type WorkflowRunEndOutcome = "recorded" | "next-run-enqueued" | "stale"

/** Script `workflowRunEnd`. */
export const workflowRunEndScript = defineScript<WorkflowRunEndInput, WorkflowRunEndOutcome>({
  name: "workflowRunEnd",
  source: workflowRunEndLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.queue)
    return [workflowExecutionKey(i.queue, i.executionId), k.taskPrefix, k.pending]
  },
  args: (i) => [
    i.endingRunId,
    i.outcome,
    i.result,
    i.failed ? "1" : "0",
    i.runId,
    i.runMessage,
    i.pendingSince,
    i.queue,
    `${i.queue}\n${i.executionId}`,
    Math.max(0, Math.ceil(i.retentionMs)),
    i.waiting === undefined || i.waiting.length === 0 ? "" : JSON.stringify(i.waiting)
  ],
  decode: (reply) =>
    Result.flatMap(integerReply("workflowRunEnd", reply), (n) =>
      n === 1
        ? Result.succeed("recorded" as const)
        : n === 2
          ? Result.succeed("next-run-enqueued" as const)
          : n === 0
            ? Result.succeed("stale" as const)
            : Result.fail(unexpectedReply("workflowRunEnd", n, "0, 1 or 2"))
    )
})
