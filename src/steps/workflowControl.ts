/**
 * Where a workflow execution lives and how it is woken: the control queues of a workflow (one per
 * shard), the control queue of one execution, and the wake (lua/workflowWake.lua) that records a
 * fact of an execution and enqueues its next run when it needs one. Shared by the workflow engine
 * (src/workflow/) and the inspector, so a resume or a cancel from the CLI does exactly what
 * `Workflow.resume` and `Workflow.interrupt` do.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { runScript } from "../broker/script.js"
import { unixNanosString } from "../broker/time.js"
import { type NextRun, workflowWakeScript } from "../broker/workflowWake.js"
import { emptyTaskMessage, encodeTaskMessage } from "../wire/TaskMessage.js"
import { newTaskId } from "./taskId.js"

/** The task type of a workflow run (a replay of one execution), on the workflow's control queue. */
export const workflowRunTaskType = "effect-asynq:wf:run"

/**
 * The task type that completes a DurableDeferred from any asynq client (a Go `asynq.Client`
 * included): enqueue it on the execution's control queue with the JSON payload
 * `{"token": "<deferred token>", "value": <encoded value>}` (success) or
 * `{"token": "<deferred token>", "error": <encoded error>}` (failure). The first completion wins.
 */
export const workflowDeferredTaskType = "effect-asynq:wf:deferred"

/** Where a workflow's executions live: the control queues' prefix and how many shards. */
export interface ControlQueueSettings {
  readonly queue: string
  readonly shards: number
}

/** What a run task carries besides its queue: its retry count and timeout. */
export interface RunTaskSettings extends ControlQueueSettings {
  readonly runMaxRetry: number
  readonly runTimeoutSec: number
}

/** FNV-1a (32 bit) of a string's UTF-16 code units: the shard of an execution id. */
const fnv1a = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** The control queues of a workflow (one per shard). */
export const controlQueues = (options: ControlQueueSettings, workflowName: string): ReadonlyArray<string> =>
  options.shards === 1
    ? [`${options.queue}:${workflowName}`]
    : Array.from({ length: options.shards }, (_, i) => `${options.queue}:${workflowName}#${i}`)

/** The control queue of one execution. */
export const controlQueueOf = (options: ControlQueueSettings, workflowName: string, executionId: string): string =>
  options.shards === 1
    ? `${options.queue}:${workflowName}`
    : `${options.queue}:${workflowName}#${fnv1a(executionId) % options.shards}`

const textEncoder = new TextEncoder()

/** A task message of a control queue (a run or a clock), with a JSON payload. */
export const controlMessageOf = (opts: RunTaskSettings, type: string, id: string, queue: string, payload: unknown) =>
  encodeTaskMessage({
    ...emptyTaskMessage,
    type,
    payload: textEncoder.encode(JSON.stringify(payload)),
    id,
    queue,
    retry: opts.runMaxRetry,
    timeout: opts.runTimeoutSec
  })

/** A fresh run task for an execution (a script uses it only when it enqueues a run). */
export const nextRunOf = (
  opts: RunTaskSettings,
  queue: string,
  workflowName: string,
  executionId: string
): Effect.Effect<NextRun> =>
  Effect.map(Clock.currentTimeMillis, (nowMs) => {
    const runId = newTaskId()
    return {
      queue,
      runId,
      runMessage: controlMessageOf(opts, workflowRunTaskType, runId, queue, { workflow: workflowName, executionId }),
      pendingSince: unixNanosString(nowMs)
    }
  })

/** Records a fact of an execution (or nothing: field "") and wakes it (lua/workflowWake.lua). Needs only the Broker. */
export const wakeExecution = (
  opts: RunTaskSettings,
  workflowName: string,
  executionId: string,
  field: string,
  value: string,
  mode: "a" | "e"
) =>
  wakeExecutionOn(opts, controlQueueOf(opts, workflowName, executionId), workflowName, executionId, field, value, mode)

/** `wakeExecution` on a control queue known already (the inspector finds it among the registered queues). */
export const wakeExecutionOn = (
  opts: Omit<RunTaskSettings, "shards" | "queue">,
  queue: string,
  workflowName: string,
  executionId: string,
  field: string,
  value: string,
  mode: "a" | "e"
) =>
  Effect.flatMap(nextRunOf({ ...opts, queue, shards: 1 }, queue, workflowName, executionId), (run) =>
    runScript(workflowWakeScript, { ...run, executionId, field, value, mode })
  )
