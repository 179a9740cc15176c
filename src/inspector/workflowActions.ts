import * as Effect from "effect/Effect"
import { InvalidState } from "../broker/errors.js"
import { readExecutionFields } from "../broker/workflowActivityDone.js"
import { publishWorkflowInterrupt } from "../broker/workflowNotices.js"
import type { WorkflowWakeOutcome } from "../broker/workflowWake.js"
import { wakeExecutionOn } from "../steps/workflowControl.js"
import { executionQueue } from "./getWorkflowExecution.js"
import type { ExecutionState, WorkflowInspectOptions } from "./workflowTypes.js"

/** Options of resume and cancel: where the executions are, and what a run task they enqueue carries (the engine's defaults unless given). */
export interface WorkflowActionOptions extends WorkflowInspectOptions {
  /** The engine's `runMaxRetry` (default 25): the retry count of a run task this enqueues. */
  readonly runMaxRetry?: number | undefined
  /** The engine's `runTimeoutSec` (default 1800): the timeout of a run task this enqueues. */
  readonly runTimeoutSec?: number | undefined
}

/** What a resume or cancel did: the execution's state before, and whether a run was enqueued ("run-enqueued") or the pending or running run will see it ("recorded"). */
export interface WorkflowActionResult {
  readonly executionId: string
  readonly queue: string
  readonly from: ExecutionState
  /** It was suspended by SuspendOnFailure. */
  readonly failed: boolean
  readonly outcome: WorkflowWakeOutcome
}

const act = (action: "resume" | "cancel", workflow: string, executionId: string, options: WorkflowActionOptions) =>
  Effect.gen(function* () {
    const queue = yield* executionQueue(workflow, executionId, options)
    const [state, failed] = yield* readExecutionFields(queue, executionId, ["state", "failed"])
    if (state === "complete")
      return yield* new InvalidState({
        message: `execution "${executionId}" of workflow "${workflow}" is complete; there is nothing to ${action}`
      })
    const run = { runMaxRetry: options.runMaxRetry ?? 25, runTimeoutSec: options.runTimeoutSec ?? 1800 }
    const field = action === "cancel" ? "interrupt" : ""
    const outcome = yield* wakeExecutionOn(run, queue, workflow, executionId, field, field === "" ? "" : "1", "e")
    if (action === "cancel") yield* publishWorkflowInterrupt(queue, executionId, field)
    const from = (
      state === "pending" || state === "running" || state === "suspended" ? state : "pending"
    ) as ExecutionState
    return {
      executionId,
      queue,
      from,
      failed: failed === "1",
      outcome
    } satisfies WorkflowActionResult as WorkflowActionResult
  })

/**
 * Resumes an execution as `Workflow.resume` does (the engine's explicit wake): a suspended one
 * gets a run at once, and one suspended by SuspendOnFailure (state "failed" in the listing) runs
 * again from its last failure — this is also how a failed execution is retried. InvalidState
 * when it is complete; ExecutionNotFound when there is none.
 */
export const resumeWorkflowExecution = Effect.fn("Inspector.resumeWorkflowExecution")(function* (
  workflow: string,
  executionId: string,
  options: WorkflowActionOptions = {}
) {
  return yield* act("resume", workflow, executionId, options)
})

/**
 * Cancels an execution as `Workflow.interrupt` does: records the interrupt, wakes the execution
 * and tells the process running it; its next run ends interrupted (finalizers and compensations
 * run, a final result is recorded). InvalidState when it is complete already.
 */
export const cancelWorkflowExecution = Effect.fn("Inspector.cancelWorkflowExecution")(function* (
  workflow: string,
  executionId: string,
  options: WorkflowActionOptions = {}
) {
  return yield* act("cancel", workflow, executionId, options)
})
