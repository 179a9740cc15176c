/** The typed errors of effect-asynq/workflow's engine: caps exceeded, remote steps failed. */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"

/** Which cap: steps recorded per execution, bytes of the execution's stored state, bytes of one stored result. */
export type WorkflowCap = "maxSteps" | "maxStateBytes" | "maxResultBytes"

/**
 * An execution went past one of the engine's caps (layer options `maxSteps`, `maxStateBytes`,
 * `maxResultBytes`). The step that would have gone past it is not run (a step count) or not
 * recorded (a size), and the execution fails with this error as a defect; under
 * `Workflow.SuspendOnFailure` it is parked instead, and can be resumed once the cap is raised.
 */
export class WorkflowCapExceeded extends Data.TaggedError("WorkflowCapExceeded")<{
  readonly cap: WorkflowCap
  readonly limit: number
  /** What it would have been. */
  readonly actual: number
  readonly workflow: string
  readonly executionId: string
  readonly message: string
}> {}

/**
 * A remote step failed: its task was archived (its retries ran out; `message` is the task's last
 * error), its result is not JSON, or the task was gone before its outcome was read.
 */
export class RemoteStepFailed extends Schema.TaggedError<RemoteStepFailed>()("RemoteStepFailed", {
  /** The step's name. */
  step: Schema.String,
  /** The remote task's queue and id. */
  queue: Schema.String,
  taskId: Schema.String,
  /** Why: "archived", "result-not-json" or "task-gone". */
  reason: Schema.Literals(["archived", "result-not-json", "task-gone"]),
  message: Schema.String
}) {}
