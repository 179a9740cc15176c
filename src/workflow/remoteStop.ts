/**
 * What becomes of a remote step's task when its execution completes before the step's outcome is
 * in (the workflow was interrupted, or it stopped waiting for the step: a race it lost, a failure
 * elsewhere): the task is not left to run for nobody. A task still waiting (pending, scheduled,
 * retry, aggregating) is deleted; one a server is running is left to finish (its outcome is not
 * read), and the step's check keeps following it, so that if that attempt fails the retry is
 * deleted instead of run again. A completed, archived or vanished task is left as it is.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import { runScript } from "../broker/script.js"
import { deleteTaskScript } from "../broker/taskActions.js"
import { readRemoteTask } from "../broker/workflowRemote.js"
import type { RedisError } from "../redis/errors.js"

/** The states of a task that no server is running yet (or again). */
const waiting: ReadonlySet<string> = new Set(["pending", "scheduled", "retry", "aggregating"])

/** What `stopRemoteTask` found: deleted, still running (left to finish), or nothing to do. */
export type RemoteStop = "deleted" | "running" | "done"

/**
 * Deletes the remote task `taskId` of `queue` if it is waiting; says "running" if a server runs it
 * (also when it started between the read and the delete), "done" otherwise.
 */
export const stopRemoteTask: (queue: string, taskId: string) => Effect.Effect<RemoteStop, RedisError, Broker> =
  Effect.fn("Workflow.stopRemoteTask")(function* (queue: string, taskId: string) {
    const { state } = yield* readRemoteTask(queue, taskId)
    if (state === "active") return "running" as RemoteStop
    if (state === undefined || !waiting.has(state)) return "done" as RemoteStop
    const nowMs = yield* Clock.currentTimeMillis
    return yield* runScript(deleteTaskScript, { queue, id: taskId, nowMs }).pipe(
      Effect.as<RemoteStop>("deleted"),
      Effect.catchTags({
        // The delete refuses an active task only: it started meanwhile.
        InvalidState: () => Effect.succeed<RemoteStop>("running"),
        TaskNotFound: () => Effect.succeed<RemoteStop>("done")
      })
    )
  })

/** A dispatched remote step's task. */
export interface DispatchedStep {
  readonly queue: string
  readonly taskId: string
}

/**
 * The remote steps an execution's fields record as dispatched (`r:<name>/<attempt>`, valued with
 * the task's queue and id) without a recorded outcome (`d:RemoteStep/<name>/<attempt>`).
 */
export const outstandingRemoteSteps = (fields: ReadonlyMap<string, string>): Array<DispatchedStep> => {
  const out: Array<DispatchedStep> = []
  for (const [field, value] of fields) {
    if (!field.startsWith("r:") || fields.has(`d:RemoteStep/${field.slice(2)}`)) continue
    try {
      const marker = JSON.parse(value) as { queue?: unknown; taskId?: unknown }
      if (typeof marker.queue === "string" && typeof marker.taskId === "string")
        out.push({ queue: marker.queue, taskId: marker.taskId })
    } catch {
      // Not a marker of ours: left alone.
    }
  }
  return out
}
