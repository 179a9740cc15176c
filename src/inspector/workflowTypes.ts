/**
 * What the inspector shows of durable workflow executions (effect-asynq/workflow), and how it
 * finds a workflow's control queues. The inspector does not know a workflow's schemas: payloads,
 * results and exits are shown as the JSON the engine stored.
 */
import * as Effect from "effect/Effect"
import { InvalidArgument, QueueNotFound } from "../broker/errors.js"
import { listQueues } from "../broker/queues.js"
import { controlQueues } from "../steps/workflowControl.js"

/** Where the engine keeps a workflow's executions: the same `queue` (and `shards`, when known) as the engine layer's options. */
export interface WorkflowInspectOptions {
  /** Prefix of the control queues (default "workflow", the engine's). */
  readonly queue?: string | undefined
  /**
   * The engine's `shards`. Left out, the workflow's control queues are the ones registered in
   * `asynq:queues` (`<queue>:<workflow>` and `<queue>:<workflow>#<n>`; the engine registers them).
   */
  readonly shards?: number | undefined
}

/** The state of an execution, as the engine records it. */
export type ExecutionState = "pending" | "running" | "suspended" | "complete"

/** The states `listWorkflowExecutions` filters on: an execution state, or "failed" (suspended by SuspendOnFailure). */
export const executionStateFilters = ["pending", "running", "suspended", "complete", "failed"] as const

/** A state filter of `listWorkflowExecutions`. */
export type ExecutionStateFilter = (typeof executionStateFilters)[number]

/** How an execution's last result reads: complete with success or failure, or suspended. */
export type ExecutionOutcome = "success" | "failure" | "suspended"

/** One execution in a listing. */
export interface WorkflowExecutionSummary {
  readonly executionId: string
  /** The control queue holding it. */
  readonly queue: string
  readonly state: ExecutionState
  /** Suspended by SuspendOnFailure: waits for an explicit resume (`workflow resume`). */
  readonly failed: boolean
  /** Runs (replays) begun so far. */
  readonly runs: number
  /** The last result's outcome, when there is one. */
  readonly outcome: ExecutionOutcome | undefined
  /** A failure's error in one line (complete with a failure, or suspended by SuspendOnFailure). */
  readonly error: string | undefined
}

/** One stored activity attempt: done (its success value) or failed (its error). */
export interface ActivityInfo {
  readonly name: string
  readonly attempt: number
  readonly status: "done" | "failed"
  /** The success value (JSON, as the activity's schema encoded it). */
  readonly result?: unknown
  /** The failure, in one line. */
  readonly error?: string
}

/**
 * A deferred: completed (done or failed), or awaited by the execution's last suspended run and not
 * completed yet (waiting). Durable clocks' own deferreds are shown as clocks, not here.
 */
export interface DeferredInfo {
  readonly name: string
  readonly status: "done" | "failed" | "waiting"
  readonly value?: unknown
  readonly error?: string
}

/** A durable clock: still scheduled (due at `dueAtMs`, unix ms, rounded up to a second) or fired. */
export interface ClockInfo {
  readonly name: string
  readonly status: "scheduled" | "fired"
  readonly dueAtMs?: number
}

/** One execution in detail. */
export interface WorkflowExecutionInfo extends WorkflowExecutionSummary {
  readonly workflow: string
  /** The payload (JSON, as the workflow's payload schema encoded it). */
  readonly payload: unknown
  /** The last result as stored (JSON), or undefined before the first run ended. */
  readonly result: unknown
  /** The parent execution, for a child workflow. */
  readonly parent: { readonly workflow: string; readonly executionId: string } | undefined
  /** An interrupt recorded (cancel): "interrupt", or "interruptUnsafe". */
  readonly interrupt: "interrupt" | "interruptUnsafe" | undefined
  /** The id of its current run task on the control queue (pending or running), if any. */
  readonly runTaskId: string | undefined
  readonly activities: ReadonlyArray<ActivityInfo>
  /** Deferreds completed so far, and those the last suspended run waits on ("waiting"). */
  readonly deferreds: ReadonlyArray<DeferredInfo>
  readonly clocks: ReadonlyArray<ClockInfo>
  /** The version recorded when the execution started (a `Version` annotation or the engine's `version`), if any. */
  readonly version?: string | undefined
}

const isState = (s: string | undefined): s is ExecutionState =>
  s === "pending" || s === "running" || s === "suspended" || s === "complete"

const parseJson = (s: string | undefined): unknown => {
  if (s === undefined || s === "") return undefined
  try {
    return JSON.parse(s)
  } catch {
    return s
  }
}

const oneLine = (v: unknown): string =>
  (typeof v === "string" ? v : (JSON.stringify(v) ?? String(v))).replace(/\s+/g, " ")

/** A defect as stored: an Error becomes `{name, message, ...}` (shown as "name: message"), anything else its JSON. */
const defectText = (d: unknown): string => {
  const e = d as { name?: unknown; message?: unknown } | undefined
  return typeof e === "object" && e !== null && typeof e.message === "string"
    ? oneLine(`${typeof e.name === "string" ? e.name : "Error"}: ${e.message}`)
    : oneLine(d)
}

/** A stored cause (effect's Cause as JSON: a list of Fail, Die and Interrupt reasons) in one line. */
export const causeText = (cause: unknown): string => {
  const reasons = Array.isArray(cause) ? cause : [cause]
  return reasons
    .map((r: { _tag?: string; error?: unknown; defect?: unknown }) =>
      r?._tag === "Fail"
        ? oneLine(r.error)
        : r?._tag === "Die"
          ? `defect: ${defectText(r.defect)}`
          : r?._tag === "Interrupt"
            ? "interrupted"
            : oneLine(r)
    )
    .join("; ")
}

/** A stored exit (JSON `{"_tag":"Success","value"}` or `{"_tag":"Failure","cause"}`): success with its value, or failure with its error. */
export const readExit = (
  json: string
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string } => {
  const e = parseJson(json) as { _tag?: string; value?: unknown; cause?: unknown } | undefined
  if (e?._tag === "Success") return { ok: true, value: e.value }
  if (e?._tag === "Failure") return { ok: false, error: causeText(e.cause) }
  return { ok: false, error: `unreadable exit: ${oneLine(json).slice(0, 200)}` }
}

/** A stored result (Workflow.Result as JSON: Complete with an exit, or Suspended with an optional cause): its outcome and error. */
export const readResult = (
  json: string | undefined
): { readonly outcome: ExecutionOutcome | undefined; readonly error: string | undefined } => {
  const r = parseJson(json) as { _tag?: string; exit?: { _tag?: string; cause?: unknown }; cause?: unknown } | undefined
  if (r === undefined) return { outcome: undefined, error: undefined }
  if (r._tag === "Complete")
    return r.exit?._tag === "Success"
      ? { outcome: "success", error: undefined }
      : { outcome: "failure", error: causeText(r.exit?.cause) }
  if (r._tag === "Suspended")
    return { outcome: "suspended", error: r.cause === undefined || r.cause === null ? undefined : causeText(r.cause) }
  return { outcome: undefined, error: undefined }
}

/** The summary of an execution from its fields state, failed, runs and result. */
export const summaryOf = (
  queue: string,
  executionId: string,
  state: string | undefined,
  failed: string | undefined,
  runs: string | undefined,
  result: string | undefined
): WorkflowExecutionSummary => {
  const r = readResult(result)
  return {
    executionId,
    queue,
    state: isState(state) ? state : "pending",
    failed: failed === "1",
    runs: Number(runs ?? 0) || 0,
    outcome: r.outcome,
    error: r.error
  }
}

/** Whether a summary passes a state filter. */
export const matchesState = (s: WorkflowExecutionSummary, filter: ExecutionStateFilter | undefined): boolean =>
  filter === undefined ? true : filter === "failed" ? s.state === "suspended" && s.failed : s.state === filter

/**
 * A workflow's control queues: from `shards` when given, else the ones registered in
 * `asynq:queues`. QueueNotFound when none is registered (no execution of it was ever started with
 * this prefix); InvalidArgument for a bad name or option.
 */
export const workflowQueues = Effect.fn("Inspector.workflowQueues")(function* (
  workflow: string,
  options: WorkflowInspectOptions = {}
) {
  const prefix = options.queue ?? "workflow"
  if (workflow.trim() === "")
    return yield* new InvalidArgument({ field: "workflow", message: "the workflow name is empty" })
  if (prefix.trim() === "" || /[{}\s]/.test(prefix))
    return yield* new InvalidArgument({
      field: "queue",
      message: `queue must be a non-empty name without braces or spaces, got ${JSON.stringify(prefix)}`
    })
  if (options.shards !== undefined) {
    if (!Number.isInteger(options.shards) || options.shards < 1 || options.shards > 1024) {
      return yield* new InvalidArgument({
        field: "shards",
        message: `shards must be an integer from 1 to 1024, got ${options.shards}`
      })
    }
    return controlQueues({ queue: prefix, shards: options.shards }, workflow)
  }
  const base = `${prefix}:${workflow}`
  const found = (yield* listQueues())
    .map((q) => [q, q === base ? { workflow, shard: -1 } : controlQueueName(prefix, q)] as const)
    .filter((x): x is readonly [string, ControlQueueName] => x[1]?.workflow === workflow)
    .sort((a, b) => a[1].shard - b[1].shard)
    .map(([q]) => q)
  if (found.length === 0) {
    return yield* new QueueNotFound({
      queue: base,
      message: `workflow "${workflow}" has no control queue ("${base}" or "${base}#<n>" in asynq:queues): no execution of it was started with queue prefix "${prefix}"`
    })
  }
  return found as ReadonlyArray<string>
})

/** A control queue's name read back: the workflow and the shard (-1: the only queue, no `#<n>`). */
export interface ControlQueueName {
  readonly workflow: string
  readonly shard: number
}

/** Reads `<prefix>:<workflow>` or `<prefix>:<workflow>#<n>` (the engine's control queues); undefined for any other queue. */
export const controlQueueName = (prefix: string, queue: string): ControlQueueName | undefined => {
  if (!queue.startsWith(`${prefix}:`)) return undefined
  const rest = queue.slice(prefix.length + 1)
  const m = /^(.+)#(\d+)$/.exec(rest)
  if (m) return { workflow: m[1]!, shard: Number(m[2]) }
  return rest === "" ? undefined : { workflow: rest, shard: -1 }
}

/** A workflow found among the registered control queues, with its queues (shard order). */
export interface WorkflowSummary {
  readonly workflow: string
  readonly queues: ReadonlyArray<string>
}

/**
 * The workflows that have control queues registered in `asynq:queues` under a prefix (default
 * "workflow"): each with its queues, by name. The engine registers a workflow's queues when it
 * starts an execution or a worker registers it; a queue named `<prefix>:…` by hand is listed too.
 */
export const listWorkflows = Effect.fn("Inspector.listWorkflows")(function* (
  options: Pick<WorkflowInspectOptions, "queue"> = {}
) {
  const prefix = options.queue ?? "workflow"
  if (prefix.trim() === "" || /[{}\s]/.test(prefix))
    return yield* new InvalidArgument({
      field: "queue",
      message: `queue must be a non-empty name without braces or spaces, got ${JSON.stringify(prefix)}`
    })
  const byName = new Map<string, Array<readonly [string, number]>>()
  for (const q of yield* listQueues()) {
    const n = controlQueueName(prefix, q)
    if (n === undefined) continue
    const list = byName.get(n.workflow) ?? []
    list.push([q, n.shard])
    byName.set(n.workflow, list)
  }
  return [...byName.keys()].sort().map(
    (workflow): WorkflowSummary => ({
      workflow,
      queues: byName
        .get(workflow)!
        .slice()
        .sort((a, b) => a[1] - b[1])
        .map(([q]) => q)
    })
  ) as ReadonlyArray<WorkflowSummary>
})
