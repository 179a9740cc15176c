/**
 * Versions of workflow executions: a version is recorded when an execution starts (the workflow's
 * `Version` annotation, else the engine layer's `version` option) and every run of that execution
 * reads the same one, whatever code the process runs now. Branch on it to change a workflow while
 * executions of the old version are in flight.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { engineExtras } from "./internal.js"

/**
 * The version a workflow's new executions record (a workflow annotation):
 * `Workflow.make("Order", { ..., annotations: Context.make(Version, "2") })` or
 * `Order.annotate(Version, "2")`. Without it, the engine layer's `version` option applies.
 */
export const Version = Context.Reference<string | undefined>("effect-asynq/workflow/Version", {
  defaultValue: () => undefined
})

/**
 * The version the current execution recorded when it started (inside a workflow), or undefined
 * when none was (no annotation, no layer option, or it started before versions were recorded).
 * Under another engine (`WorkflowEngine.layerMemory`): the workflow's `Version` annotation.
 */
export const workflowVersion: Effect.Effect<
  string | undefined,
  never,
  WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance
> = Effect.gen(function* () {
  const engine = yield* WorkflowEngine.WorkflowEngine
  const instance = yield* WorkflowEngine.WorkflowInstance
  const extras = engineExtras.get(engine)
  return extras === undefined
    ? Context.get(instance.workflow.annotations, Version)
    : extras.versionOf(instance.executionId)
})
