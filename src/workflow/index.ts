/**
 * effect-asynq/workflow: a durable `WorkflowEngine` (effect's `effect/workflow`) on asynq's Redis.
 * Write plain `effect/workflow` code (`Workflow.make`, `Activity.make`, `DurableDeferred`, …) and
 * provide `layer()` instead of `WorkflowEngine.layerMemory`: executions, activity results and
 * deferreds are stored in Redis, and each run of a workflow is an ordinary asynq task on the
 * workflow's control queue, processed by the workers of the processes that register the workflow
 * (`Workflow.toLayer`).
 *
 *   import * as DurableWorkflows from "effect-asynq/workflow"
 *   const Engine = DurableWorkflows.layer().pipe(Layer.provide(Broker.layer), Layer.provide(Redis.layer({ url })))
 *   const Worker = SendEmail.toLayer(({ to }) => ...).pipe(Layer.provideMerge(Engine))
 *
 * `flow()` for Promise users: `createFlowClient().flow({ nodes })` starts a DAG of tasks (shared
 * nodes allowed, a failure policy per node) that `runFlowWorker(handlers)` runs on this engine.
 */
import * as Layer from "effect/Layer"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { Broker } from "../broker/Broker.js"
import type { InvalidArgument } from "../broker/errors.js"
import { syncSha256Layer } from "./digest.js"
import { make, type WorkflowLayerOptions } from "./engine.js"

/**
 * Remote steps: a workflow step that is an ordinary asynq task, run by any asynq server (a Go one
 * included). `RemoteStep.make({ name, task, success })`, then `yield* step.run(payload)` inside a
 * workflow.
 */
export * as RemoteStep from "./remoteStep.js"
export { RemoteStepFailed, type WorkflowCap, WorkflowCapExceeded } from "./errors.js"
export { Version, workflowVersion } from "./version.js"
export { completeDeferred, type ControlQueueOptions, createDeferredClient, type DeferredClient } from "./deferred.js"
export {
  type AwaitFlowOptions,
  awaitFlow,
  cancelFlow,
  defaultAwaitFlowTimeoutMs,
  defaultNodeTimeoutMs,
  FlowFailed,
  type FlowFailurePolicy,
  type FlowHandlers,
  type FlowNode,
  type FlowNodeContext,
  type FlowNodeError,
  type FlowNodeHandler,
  type FlowNodeOutcome,
  type FlowNodeStatus,
  FlowNotFound,
  type FlowQueueOptions,
  type FlowResult,
  type FlowSpec,
  type FlowStatus,
  FlowTimeout,
  type FlowWorkerOptions,
  flowExecutionId,
  flowStatus,
  flowWorker,
  flowWorkflow,
  flowWorkflowName,
  InvalidFlow,
  type InvalidFlowReason,
  maxFlowNodes,
  startFlow,
  validateFlow
} from "./flow.js"
export {
  createFlowClient,
  type FlowClient,
  type FlowClientOptions,
  type FlowHandle,
  type FlowWorker,
  type RunFlowWorkerOptions,
  runFlowWorker
} from "./flowClient.js"
export {
  controlQueueOf,
  controlQueues,
  defaultMaxResultBytes,
  defaultMaxStateBytes,
  defaultMaxSteps,
  workflowClockTaskType,
  workflowDeferredTaskType,
  type WorkflowLayerOptions,
  workflowRunTaskType
} from "./engine.js"

/**
 * The durable workflow engine as a Layer providing effect's `WorkflowEngine`, over the `Broker`.
 * Workflows registered with it (`Workflow.toLayer`) get a worker in this process for their
 * control queues while the registration's layer is alive; a process that registers none only
 * starts, polls, resumes, interrupts and completes deferreds. Options are checked when the layer
 * is built: a bad one fails the build with an InvalidArgument naming it. It also sets effect's
 * `WebCrypto` reference to the same Crypto with SHA-256 digests computed synchronously (digest.ts):
 * execution ids are SHA-256 digests, and Web Crypto's own digest costs a thread-pool round trip.
 */
export const layer = (
  options?: WorkflowLayerOptions
): Layer.Layer<WorkflowEngine.WorkflowEngine, InvalidArgument, Broker> =>
  Layer.merge(Layer.effect(WorkflowEngine.WorkflowEngine, make(options)), syncSha256Layer)
