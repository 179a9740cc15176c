/**
 * What the durable engine offers beyond effect's `WorkflowEngine` contract (remote steps, the
 * recorded version), found from the engine service itself: the engine registers its extras here
 * when it is built, and `RemoteStep` and `workflowVersion` look them up. Under another engine
 * (`WorkflowEngine.layerMemory`) there are none.
 */
import type * as Effect from "effect/Effect"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { TaskDefinition } from "../steps/TaskDefinition.js"
import type { EnqueueOptions } from "../steps/options.js"

/** A remote step to dispatch: its task, where it goes, and how its outcome is checked. */
export interface RemoteDispatch {
  readonly instance: WorkflowEngine.WorkflowInstance["Service"]
  /** The step's name and attempt. */
  readonly name: string
  readonly attempt: number
  /** The step's deferred (`RemoteStep/<name>/<attempt>`), where its outcome is recorded. */
  readonly deferredName: string
  readonly token: string
  readonly task: TaskDefinition<any>
  readonly payload: unknown
  readonly options: EnqueueOptions
  readonly pollInitialMs: number
  readonly pollMaxMs: number
}

/** The durable engine's extras. */
export interface EngineExtras {
  /** Enqueues a remote step's task (once per execution, step and attempt) and schedules its check. */
  readonly dispatchRemote: (d: RemoteDispatch) => Effect.Effect<void>
  /** The version recorded when the execution started, read by a run of this process (undefined: none recorded). */
  readonly versionOf: (executionId: string) => string | undefined
}

/** The extras of each durable engine service. */
export const engineExtras = new WeakMap<WorkflowEngine.WorkflowEngine["Service"], EngineExtras>()
