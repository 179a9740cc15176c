import * as Effect from "effect/Effect"
import { ExecutionNotFound } from "../broker/errors.js"
import { controlQueueOf } from "../steps/workflowControl.js"
import { findExecutionQueue, readExecution, scheduledClocks } from "../broker/workflowExecutions.js"
import {
  type ActivityInfo,
  type ClockInfo,
  type DeferredInfo,
  readExit,
  summaryOf,
  type WorkflowExecutionInfo,
  type WorkflowInspectOptions,
  workflowQueues
} from "./workflowTypes.js"

const clockPrefix = "DurableClock/"

const parseJson = (s: string | undefined): unknown => {
  if (s === undefined || s === "") return undefined
  try {
    return JSON.parse(s)
  } catch {
    return s
  }
}

/** The names in an execution's "waiting" field (a JSON array, or "" / absent: none). */
const waitingNames = (s: string | undefined): ReadonlyArray<string> => {
  const v = parseJson(s)
  return Array.isArray(v) ? v.filter((n): n is string => typeof n === "string") : []
}

/** Finds the control queue of an execution, or ExecutionNotFound. */
export const executionQueue = Effect.fn("Inspector.executionQueue")(function* (
  workflow: string,
  executionId: string,
  options: WorkflowInspectOptions = {}
) {
  const queues = yield* workflowQueues(workflow, options)
  // The shard the engine picks for this id when the shards are all there (`shards` given, or every
  // one registered): tried first, so the usual lookup is one EXISTS.
  const prefix = options.queue ?? "workflow"
  const likely = controlQueueOf(
    { queue: prefix, shards: queues.length === 1 && !queues[0]!.includes("#") ? 1 : queues.length },
    workflow,
    executionId
  )
  const queue = yield* findExecutionQueue(
    queues.includes(likely) ? [likely, ...queues.filter((q) => q !== likely)] : queues,
    executionId
  )
  if (queue === undefined)
    return yield* new ExecutionNotFound({
      workflow,
      executionId,
      message: `workflow "${workflow}" has no execution "${executionId}"`
    })
  return queue
})

/**
 * One execution of a workflow in detail: state, payload, last result, its stored activities (done
 * or failed, per attempt), deferreds (completed, or waited on by the last suspended run), and durable clocks (still scheduled, with their due
 * time, or fired). ExecutionNotFound when there is none (or it is another workflow's).
 */
export const getWorkflowExecution = Effect.fn("Inspector.getWorkflowExecution")(function* (
  workflow: string,
  executionId: string,
  options: WorkflowInspectOptions = {}
) {
  const queue = yield* executionQueue(workflow, executionId, options)
  const h = yield* readExecution(queue, executionId)
  if (h === undefined || h.get("wf") !== workflow) {
    return yield* new ExecutionNotFound({
      workflow,
      executionId,
      message: `workflow "${workflow}" has no execution "${executionId}"`
    })
  }
  const activities: Array<ActivityInfo> = []
  const deferreds: Array<DeferredInfo> = []
  const fired: Array<ClockInfo> = []
  for (const [field, value] of h) {
    if (field.startsWith("a:")) {
      const slash = field.lastIndexOf("/")
      const exit = readExit(value)
      const base = { name: field.slice(2, slash), attempt: Number(field.slice(slash + 1)) }
      activities.push(
        exit.ok ? { ...base, status: "done", result: exit.value } : { ...base, status: "failed", error: exit.error }
      )
    } else if (field.startsWith(`d:${clockPrefix}`)) {
      fired.push({ name: field.slice(2 + clockPrefix.length), status: "fired" })
    } else if (field.startsWith("d:")) {
      const exit = readExit(value)
      deferreds.push(
        exit.ok
          ? { name: field.slice(2), status: "done", value: exit.value }
          : { name: field.slice(2), status: "failed", error: exit.error }
      )
    }
  }
  // What the last suspended run waits on (recorded by the engine as it suspended), unless completed since.
  for (const name of waitingNames(h.get("waiting")))
    if (!name.startsWith(clockPrefix) && !h.has(`d:${name}`)) deferreds.push({ name, status: "waiting" })
  activities.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.attempt - b.attempt))
  deferreds.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const scheduled = (yield* scheduledClocks(queue, executionId)).map(
    (c): ClockInfo => ({ name: c.name, status: "scheduled", dueAtMs: c.dueAtMs })
  )
  const clocks = [...scheduled.filter((c) => !fired.some((f) => f.name === c.name)), ...fired].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  )
  const parent = parseJson(h.get("parent")) as { workflow: string; executionId: string } | undefined
  const interrupt = h.has("interruptUnsafe") ? "interruptUnsafe" : h.has("interrupt") ? "interrupt" : undefined
  return {
    ...summaryOf(queue, executionId, h.get("state"), h.get("failed"), h.get("runs"), h.get("result")),
    workflow,
    payload: parseJson(h.get("payload")),
    result: parseJson(h.get("result")),
    parent: parent === undefined ? undefined : { workflow: parent.workflow, executionId: parent.executionId },
    interrupt,
    runTaskId: h.get("task"),
    activities,
    deferreds,
    clocks,
    version: h.get("version")
  } satisfies WorkflowExecutionInfo as WorkflowExecutionInfo
})
