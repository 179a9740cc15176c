import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { archiveMaxSize } from "../broker/archive.js"
import {
  archiveAllBatchScript,
  type BatchCounts,
  deleteAllBatchScript,
  runAllBatchScript
} from "../broker/bulkActions.js"
import { runScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import type { TaskState } from "../wire/keys.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "../broker/queues.js"
import type { BulkOptions } from "./types.js"

/** How many tasks one Lua call of a bulk action changes at most, unless `batchSize` says otherwise. */
export const defaultBatchSize = 1000

export type BulkVerb = "run" | "archive" | "delete"
const allowed: Record<BulkVerb, ReadonlyArray<TaskState>> = {
  run: ["scheduled", "retry", "archived", "aggregating"],
  archive: ["pending", "scheduled", "retry", "aggregating"],
  delete: ["pending", "scheduled", "retry", "archived", "completed", "aggregating"]
}

/**
 * Checks a bulk action's arguments (the state the verb works on, a group for aggregating tasks, the
 * batch size) without touching Redis; succeeds with the batch size. The CLI uses it to refuse a bad
 * command line before it counts what a bulk delete or archive would change.
 */
export const checkBulkAction = (verb: BulkVerb, state: string, o: BulkOptions) =>
  Effect.gen(function* () {
    if (!(allowed[verb] as ReadonlyArray<string>).includes(state)) {
      return yield* new InvalidArgument({
        field: "state",
        message: `cannot ${verb} all ${state} tasks; ${verb} all works on ${allowed[verb].join(", ")} tasks`
      })
    }
    if (state === "aggregating" && !o.group)
      return yield* new InvalidArgument({ field: "group", message: `${verb} all aggregating tasks needs a group name` })
    const batch = o.batchSize ?? defaultBatchSize
    if (!Number.isInteger(batch) || batch < 1)
      return yield* new InvalidArgument({
        field: "batchSize",
        message: `batch size must be a whole number >= 1, got ${batch}`
      })
    return batch
  })

/**
 * Calls one batch script until the source is empty, or until as many tasks as it held at the
 * first call are done (so a queue that keeps filling up cannot keep the loop going), reporting
 * progress after every batch. Returns how many tasks were handled and, when the batches report
 * it, how many were trimmed.
 */
const drain = <R>(o: BulkOptions, batch: (now: number) => Effect.Effect<BatchCounts, RedisError, R>) =>
  Effect.gen(function* () {
    let done = 0
    let trimmed: number | undefined
    let target = Infinity
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const r = yield* batch(now)
      done += r.done
      if (r.trimmed !== undefined) trimmed = (trimmed ?? 0) + r.trimmed
      if (target === Infinity) target = r.done + r.left
      o.onProgress?.(trimmed === undefined ? { done, total: done + r.left } : { done, total: done + r.left, trimmed })
      if (r.done === 0 || r.left === 0 || done >= target) return { done, trimmed }
    }
  })

/** Moves every task of a state (scheduled, retry, archived, or a group) to pending (asynq's RunAll*Tasks). */
export const runAll = Effect.fn("Inspector.runAll")(function* (
  queue: string,
  state: TaskState,
  options: BulkOptions = {}
) {
  const size = yield* checkBulkAction("run", state, options)
  yield* requireQueue(queue)
  const r = yield* drain(options, (nowMs) =>
    runScript(runAllBatchScript, { queue, state, group: options.group, size, nowMs })
  )
  return r.done
})

/**
 * Archives every task of a state (pending, scheduled, retry, or a group) (asynq's ArchiveAll*Tasks).
 * Like every archiving, it keeps the archive within 90 days and 10,000 tasks: the older archived
 * tasks it removes are counted in the progress (`trimmed`) and logged as a warning.
 */
export const archiveAll = Effect.fn("Inspector.archiveAll")(function* (
  queue: string,
  state: TaskState,
  options: BulkOptions = {}
) {
  const size = yield* checkBulkAction("archive", state, options)
  yield* requireQueue(queue)
  const r = yield* drain(options, (nowMs) =>
    runScript(archiveAllBatchScript, { queue, state, group: options.group, size, nowMs })
  )
  if (r.trimmed)
    yield* Effect.logWarning(
      `archiving removed ${r.trimmed} older archived task(s) to keep the archive within ${archiveMaxSize} tasks and 90 days`
    )
  return r.done
})

/** Deletes every task of a state (pending, scheduled, retry, archived, completed, or a group) (asynq's DeleteAll*Tasks). */
export const deleteAll = Effect.fn("Inspector.deleteAll")(function* (
  queue: string,
  state: TaskState,
  options: BulkOptions = {}
) {
  const size = yield* checkBulkAction("delete", state, options)
  yield* requireQueue(queue)
  const r = yield* drain(options, (nowMs) =>
    runScript(deleteAllBatchScript, { queue, state, group: options.group, size, nowMs })
  )
  return r.done
})
