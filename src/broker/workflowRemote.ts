/**
 * A workflow's remote steps (ordinary asynq tasks on any queue): the script that schedules the
 * check of one (lua/workflowRemoteSchedule.lua), and the raw read of the remote task's state,
 * result and message that a check makes. Nothing here runs the remote task.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { workflowRemoteScheduleLua } from "../redis/lua.generated.js"
import type { ScriptArg } from "../redis/Redis.js"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { workflowExecutionKey } from "../wire/workflowKeys.js"
import { Broker } from "./Broker.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixMsString } from "./time.js"

/** A check of a remote step to schedule. */
export interface WorkflowRemoteScheduleInput {
  /** The execution's control queue. */
  readonly queue: string
  readonly executionId: string
  /** `d:RemoteStep/<name>/<attempt>`: where the step's outcome is recorded. */
  readonly deferredField: string
  /** `r:<name>/<attempt>`: the dispatch marker. */
  readonly markerField: string
  readonly markerValue: string
  /** "first": the dispatch; "next": the task is not done (or still runs after its execution completed: remoteStop.ts). */
  readonly mode: "first" | "next"
  readonly taskId: string
  readonly taskMessage: ScriptArg
  readonly dueMs: number
}

/** Script `workflowRemoteSchedule`: true when the check is scheduled, false when nothing was written. */
export const workflowRemoteScheduleScript = defineScript<WorkflowRemoteScheduleInput, boolean>({
  name: "workflowRemoteSchedule",
  source: workflowRemoteScheduleLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.queue)
    return [workflowExecutionKey(i.queue, i.executionId), k.taskPrefix, k.scheduled]
  },
  args: (i) => [
    i.deferredField,
    i.markerField,
    i.markerValue,
    i.mode,
    i.taskId,
    i.taskMessage,
    unixMsString(i.dueMs),
    i.queue
  ],
  decode: (reply) =>
    Result.flatMap(integerReply("workflowRemoteSchedule", reply), (n) =>
      n === 1
        ? Result.succeed(true)
        : n === 0
          ? Result.succeed(false)
          : Result.fail(unexpectedReply("workflowRemoteSchedule", n, "0 or 1"))
    )
})

/** What a check sees of a remote task: its state, its result bytes and its message (undefined when absent). */
export interface RemoteTaskState {
  readonly state: string | undefined
  readonly result: Uint8Array | undefined
  readonly msg: Uint8Array | undefined
}

/** Reads a task's `state`, `result` and `msg` (one HMGET; all undefined when there is no such task). */
export const readRemoteTask = (queue: string, taskId: string): Effect.Effect<RemoteTaskState, RedisError, Broker> =>
  Effect.flatMap(Broker, ({ redis }) =>
    redis.use("workflow remote task read", async (c) => {
      const [state, result, msg] = await c.hmgetBuffer(queueKeys(queue).task(taskId), "state", "result", "msg")
      return {
        state: state === null || state === undefined ? undefined : state.toString("utf8"),
        result: result ?? undefined,
        msg: msg ?? undefined
      }
    })
  )
