import { Clock, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { unixNanosString, unixSeconds } from "../broker/time.js"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { archiveCutoffSeconds, archiveMaxSize } from "./archiveLimits.js"
import { InvalidState, TaskNotFound } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import { asCodeAndState } from "./replies.js"

/** What a per-task action did: the state the task left. */
export interface TaskActionResult {
  readonly id: string
  readonly from: TaskState
}

const outcome = (script: string, queue: string, id: string, refusal: (state: string) => string) => (reply: unknown) =>
  Effect.gen(function* () {
    const { code, state } = yield* asCodeAndState(script, reply)
    if (code === 0) return yield* new TaskNotFound({ queue, id, message: `task "${id}" not found in queue "${queue}"` })
    if (code < 0) return yield* new InvalidState({ message: refusal(state) })
    return { id, from: state as TaskState } satisfies TaskActionResult
  })

/** scheduled, retry, archived, completed or aggregating -> pending (asynq's RunTask). */
export const runTask = Effect.fn("Inspector.runTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const reply = yield* redis.script("inspector_runTask", [k.task(id), k.prefix, k.pending, k.allGroups], [id, unixNanosString(now)])
  return yield* outcome("inspector_runTask", queue, id, (state) =>
    state === "active"
      ? `task "${id}" is already running (active); it cannot be run again — cancel it if it must stop`
      : `task "${id}" is already pending; it runs as soon as a worker is free`
  )(reply)
})

/** pending, scheduled, retry, completed or aggregating -> archived (asynq's ArchiveTask). */
export const archiveTask = Effect.fn("Inspector.archiveTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const reply = yield* redis.script(
    "inspector_archiveTask",
    [k.task(id), k.prefix, k.archived, k.allGroups, k.taskPrefix],
    [id, unixSeconds(now), archiveCutoffSeconds(now), archiveMaxSize]
  )
  return yield* outcome("inspector_archiveTask", queue, id, (state) =>
    state === "active"
      ? `task "${id}" is active (running) and cannot be archived; cancel it instead`
      : `task "${id}" is already archived`
  )(reply)
})

/** Deletes a task in any state but active (asynq's DeleteTask), releasing its uniqueness lock. */
export const deleteTask = Effect.fn("Inspector.deleteTask")(function* (queue: string, id: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* redis.script("inspector_deleteTask", [k.task(id), k.prefix, k.allGroups, k.uniquePrefix], [id])
  return yield* outcome("inspector_deleteTask", queue, id, () => `task "${id}" is active (running) and cannot be deleted; cancel it first`)(reply)
})
