/**
 * Remote steps: a step of a workflow that is an ordinary asynq task (a `defineTask` definition,
 * on any queue), run by any asynq server — a Go one included — instead of in the workflow's
 * process.
 *
 *   const Resize = RemoteStep.make({ name: "resize", task: ResizeImage, success: Schema.Struct({ url: Schema.String }) })
 *   // inside a workflow:
 *   const { url } = yield* Resize.run({ src })
 *
 * `run` enqueues the task once per execution, step name and attempt (its task id is derived from
 * them, so a replay enqueues nothing), with a retention so that asynq keeps it once completed, and
 * suspends the execution. A check task on the execution's control queue looks at the remote task
 * (first after `poll.initialMs`, then at doubling intervals up to `poll.maxMs`):
 *
 * - completed: the task hash's `result` field (what the handler wrote with asynq's ResultWriter)
 *   is the step's value — the JSON of the step's `success` schema's JSON form (no result: no value,
 *   for a `Schema.Void` step); text that is not JSON fails the step;
 * - archived (retries exhausted): the step fails with `RemoteStepFailed` carrying the last error;
 * - pending, active, scheduled, retry: checked again later.
 *
 * The outcome is recorded as the step's deferred (`RemoteStep/<name>/<attempt>`), which wakes the
 * execution. A server may also report it at once: the task carries the deferred's token and the
 * control queue in headers, and enqueueing the control task `effect-asynq:wf:deferred` with them
 * completes the step before the next check (the first completion wins).
 *
 * An execution that completes before the step's outcome is in (interrupted, or no longer waiting
 * for the step) stops its task: deleted while it waits, followed while a server runs it
 * (remoteStop.ts).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import type { Broker } from "../broker/Broker.js"
import { InvalidArgument } from "../broker/errors.js"
import type { Task } from "../processor/Task.js"
import type { RedisError } from "../redis/errors.js"
import type { TaskDefinition } from "../steps/TaskDefinition.js"
import { type EnqueueError, enqueue } from "../steps/enqueue.js"
import type { EnqueueOptions } from "../steps/options.js"
import { workflowDeferredTaskType } from "../steps/workflowControl.js"
import { RemoteStepFailed } from "./errors.js"
import { engineExtras } from "./internal.js"

export { RemoteStepFailed }

/** The task type of a remote step's check (a scheduled task on the execution's control queue). */
export const remoteCheckTaskType = "effect-asynq:wf:remote"

/** The header of a remote step's task that carries the token of the step's deferred. */
export const remoteTokenHeader = "effect-asynq-wf-token"
/** The header of a remote step's task that names the execution's control queue. */
export const remoteControlQueueHeader = "effect-asynq-wf-queue"

/** How long a remote step's task is kept once completed, by default (ms): a day. */
export const defaultRemoteRetentionMs = 24 * 60 * 60 * 1000

/** Options of a remote step. */
export interface RemoteStepOptions<A, S extends Schema.Constraint> {
  /** The step's name: unique within the workflow (with the attempt, it names the task and the recorded outcome). */
  readonly name: string
  /** The task to enqueue (made by `defineTask`); its payload schema checks `run`'s payload. */
  readonly task: TaskDefinition<A>
  /** The schema of the value the handler writes as its result (its JSON form); default `Schema.Void` (no result). */
  readonly success?: S | undefined
  /** The queue (default: the task definition's, else "default"). */
  readonly queue?: string | undefined
  /**
   * More enqueue options of the task (`maxRetry`, `timeout`, `deadline`, `headers`, …). `taskId` is
   * derived and `retention` is `retentionMs`; `processAt`, `processIn`, `unique` and `group` are not allowed.
   */
  readonly enqueue?: Omit<
    EnqueueOptions,
    "queue" | "taskId" | "retention" | "processAt" | "processIn" | "unique" | "group"
  >
  /**
   * How long the task is kept once completed (ms; default a day): its
   * outcome must be read within it. At least a minute and at least twice `poll.maxMs`.
   */
  readonly retentionMs?: number | undefined
  /** When the task is checked: first after `initialMs` (default 1000), then doubling up to `maxMs` (default 30,000). */
  readonly poll?: { readonly initialMs?: number | undefined; readonly maxMs?: number | undefined } | undefined
}

/** A remote step, to run inside a workflow. */
export interface RemoteStep<A, S extends Schema.Constraint> {
  readonly name: string
  readonly task: TaskDefinition<A>
  readonly successSchema: S
  /**
   * Runs the step (inside a workflow): enqueues its task once, suspends the execution until the
   * outcome is in, and gives the task's result (decoded with `success`), or fails with
   * RemoteStepFailed. Needs effect-asynq's durable engine (a defect under another one).
   */
  readonly run: (
    payload: A
  ) => Effect.Effect<
    S["Type"],
    RemoteStepFailed,
    WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance | S["DecodingServices"]
  >
}

const bad = (field: string, message: string): never => {
  throw new InvalidArgument({ field, message: `RemoteStep: ${message}` })
}

/** The task id of a remote step's task: one per execution, step name and attempt. */
export const remoteTaskId = (executionId: string, name: string, attempt: number): string =>
  `wf:${executionId}:${name}/${attempt}`

/**
 * Makes a remote step. Throws InvalidArgument for a bad option (an empty name, a retention or
 * poll interval that is not a positive number, a retention shorter than a minute or than twice
 * `poll.maxMs`).
 */
export const make = <A, S extends Schema.Constraint = typeof Schema.Void>(
  options: RemoteStepOptions<A, S>
): RemoteStep<A, S> => {
  const { name, task } = options
  if (typeof name !== "string" || name.trim() === "") bad("name", "a remote step's name must be a non-empty string")
  const pollInitialMs = options.poll?.initialMs ?? 1000
  const pollMaxMs = options.poll?.maxMs ?? 30_000
  const retentionMs = options.retentionMs ?? defaultRemoteRetentionMs
  for (const [field, v] of [
    ["poll.initialMs", pollInitialMs],
    ["poll.maxMs", pollMaxMs],
    ["retentionMs", retentionMs]
  ] as const)
    if (!Number.isFinite(v) || v <= 0) bad(field, `${field} must be a positive number of ms, got ${v}`)
  if (pollMaxMs < pollInitialMs)
    bad("poll.maxMs", `poll.maxMs (${pollMaxMs}) must be at least poll.initialMs (${pollInitialMs})`)
  if (retentionMs < Math.max(60_000, 2 * pollMaxMs))
    bad(
      "retentionMs",
      `retentionMs (${retentionMs}) must be at least a minute and at least twice poll.maxMs (${pollMaxMs}): the outcome is read from the retained task`
    )
  const success = (options.success ?? Schema.Void) as S
  const queue = options.queue ?? task.options?.queue ?? "default"
  // The definition's defaults, less what a remote step sets itself or cannot have (its task id is
  // derived; a delay, a uniqueness lock or a group would hold the step up or refuse it).
  const {
    taskId: _taskId,
    processAt: _processAt,
    processIn: _processIn,
    unique: _unique,
    group: _group,
    ...definitionOptions
  } = task.options ?? {}
  const run = (payload: A) =>
    Effect.gen(function* () {
      const engine = yield* WorkflowEngine.WorkflowEngine
      const instance = yield* WorkflowEngine.WorkflowInstance
      const extras = engineExtras.get(engine)
      if (extras === undefined)
        return yield* Effect.die(
          new Error(
            `RemoteStep "${name}": remote steps need effect-asynq's durable engine (layer() of effect-asynq/workflow)`
          )
        )
      const attempt = yield* Activity.CurrentAttempt
      const deferred = DurableDeferred.make(`RemoteStep/${name}/${attempt}`, { success, error: RemoteStepFailed })
      const token = DurableDeferred.tokenFromExecutionId(deferred, {
        workflow: instance.workflow,
        executionId: instance.executionId
      })
      // Uninterruptible: a sibling branch suspending the run must not cut a dispatch between its
      // enqueue and its first check (the check is what wakes the execution).
      yield* Effect.uninterruptible(
        extras.dispatchRemote({
          instance,
          name,
          attempt,
          deferredName: deferred.name,
          token,
          task,
          payload,
          options: { ...definitionOptions, ...options.enqueue, queue, retention: retentionMs },
          pollInitialMs,
          pollMaxMs
        })
      )
      return (yield* DurableDeferred.await(deferred)) as S["Type"]
    }) as Effect.Effect<
      S["Type"],
      RemoteStepFailed,
      WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance | S["DecodingServices"]
    >
  return { name, task, successSchema: success, run }
}

/**
 * For an effect-asynq handler that serves a remote step: writes `value` (encoded with the step's
 * `success` schema, as JSON) as the task's result and reports it to the workflow at once (the
 * control task `effect-asynq:wf:deferred` with the token and control queue from the task's
 * headers), so the step completes without waiting for its next check. A task without those
 * headers (not enqueued by a remote step), or a step without a value (`Schema.Void`), only gets its
 * result written and is read by the step's next check. InvalidArgument when the
 * value does not fit the schema.
 */
export const complete = Effect.fn("RemoteStep.complete")(function* <A, S extends Schema.Constraint>(
  step: RemoteStep<A, S>,
  task: Task,
  value: S["Type"]
): Effect.fn.Return<void, InvalidArgument | EnqueueError | RedisError, Broker | S["EncodingServices"]> {
  const codec = Schema.toCodecJson(step.successSchema as unknown as Schema.Codec<unknown, unknown>)
  const json = yield* Schema.encodeEffect(codec)(value).pipe(
    Effect.mapError(
      (e) =>
        new InvalidArgument({
          field: "value",
          message: `RemoteStep "${step.name}": the value does not fit the step's success schema: ${e.message}`
        })
    )
  )
  if (json !== undefined) yield* Effect.promise(() => task.resultWriter.write(JSON.stringify(json)))
  const token = task.headers[remoteTokenHeader]
  const queue = task.headers[remoteControlQueueHeader]
  // A step without a value (Schema.Void) is left to its check: the control task needs a value.
  if (token === undefined || queue === undefined || json === undefined) return
  yield* Effect.asVoid(enqueue(workflowDeferredTaskType, { token, value: json ?? null }, { queue }))
})
