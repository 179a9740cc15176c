import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { runScript } from "../broker/script.js"
import { archiveTaskScript, deleteTaskScript, runTaskScript } from "../broker/taskActions.js"
import { requireQueue } from "../broker/queues.js"

export type { TaskActionResult } from "../broker/taskActions.js"

/** scheduled, retry, archived, completed or aggregating -> pending (asynq's RunTask). */
export const runTask = Effect.fn("Inspector.runTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  return yield* runScript(runTaskScript, { queue, id, nowMs: yield* Clock.currentTimeMillis })
})

/** pending, scheduled, retry, completed or aggregating -> archived (asynq's ArchiveTask). */
export const archiveTask = Effect.fn("Inspector.archiveTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  return yield* runScript(archiveTaskScript, { queue, id, nowMs: yield* Clock.currentTimeMillis })
})

/** Deletes a task in any state but active (asynq's DeleteTask), releasing its uniqueness lock. */
export const deleteTask = Effect.fn("Inspector.deleteTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  return yield* runScript(deleteTaskScript, { queue, id, nowMs: yield* Clock.currentTimeMillis })
})
