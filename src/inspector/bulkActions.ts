import { Clock, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import type { RedisError } from "../redis/errors.js"
import { unixNanosString, unixSeconds } from "../broker/time.js"
import { type QueueKeys, queueKeys, type TaskState } from "../wire/keys.js"
import { archiveCutoffSeconds, archiveMaxSize } from "./archiveLimits.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import { asArray, num } from "./replies.js"
import type { BulkOptions } from "./types.js"

export const defaultBatchSize = 1000

type Verb = "run" | "archive" | "delete"
const allowed: Record<Verb, ReadonlyArray<TaskState>> = {
  run: ["scheduled", "retry", "archived", "aggregating"],
  archive: ["pending", "scheduled", "retry", "aggregating"],
  delete: ["pending", "scheduled", "retry", "archived", "completed", "aggregating"]
}

const check = (verb: Verb, state: string, o: BulkOptions) =>
  Effect.gen(function* () {
    if (!(allowed[verb] as ReadonlyArray<string>).includes(state)) {
      return yield* new InvalidArgument({ field: "state", message: `cannot ${verb} all ${state} tasks; ${verb} all works on ${allowed[verb].join(", ")} tasks` })
    }
    if (state === "aggregating" && !o.group) return yield* new InvalidArgument({ field: "group", message: `${verb} all aggregating tasks needs a group name` })
    const batch = o.batchSize ?? defaultBatchSize
    if (!Number.isInteger(batch) || batch < 1) return yield* new InvalidArgument({ field: "batchSize", message: `batch size must be a whole number >= 1, got ${batch}` })
    return batch
  })

/** Source key, whether it is a list, and the group name ("" unless aggregating). */
const source = (k: QueueKeys, state: TaskState, group: string | undefined) =>
  state === "aggregating"
    ? { key: k.group(group!), list: false, group: group! }
    : { key: k[state as "pending" | "scheduled" | "retry" | "archived" | "completed"], list: state === "pending", group: "" }

/** One batch's reply: tasks done, left in the source, and (archive batches) older archived tasks trimmed. */
interface BatchCounts {
  readonly done: number
  readonly left: number
  readonly trimmed?: number
}

/**
 * Calls one batch script until the source is empty, or until as many tasks as it held at the
 * first call are done (so a queue that keeps filling up cannot keep the loop going), reporting
 * progress after every batch. Returns how many tasks were handled and, when the batches report
 * it, how many were trimmed.
 */
const drain = (o: BulkOptions, batch: (now: number) => Effect.Effect<BatchCounts, RedisError>) =>
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

/** Reads a batch script's `{done, left[, trimmed]}` reply. */
const counts = (script: string) => (reply: unknown) =>
  Effect.map(asArray(script, reply), (a): BatchCounts => {
    const r = { done: num(a[0]) ?? 0, left: num(a[1]) ?? 0 }
    return a.length > 2 ? { ...r, trimmed: num(a[2]) ?? 0 } : r
  })

/** Moves every task of a state (scheduled, retry, archived, or a group) to pending (asynq's RunAll*Tasks). */
export const runAll = Effect.fn("Inspector.runAll")(function* (queue: string, state: TaskState, options: BulkOptions = {}) {
  const size = yield* check("run", state, options)
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const src = source(k, state, options.group)
  const r = yield* drain(options, (now) =>
    redis.script("inspector_runBatch", [src.key, k.pending, k.taskPrefix, k.allGroups], [size, unixNanosString(now), src.group]).pipe(Effect.flatMap(counts("inspector_runBatch")))
  )
  return r.done
})

/**
 * Archives every task of a state (pending, scheduled, retry, or a group) (asynq's ArchiveAll*Tasks).
 * Like every archiving, it keeps the archive within 90 days and 10,000 tasks: the older archived
 * tasks it removes are counted in the progress (`trimmed`) and logged as a warning.
 */
export const archiveAll = Effect.fn("Inspector.archiveAll")(function* (queue: string, state: TaskState, options: BulkOptions = {}) {
  const size = yield* check("archive", state, options)
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const src = source(k, state, options.group)
  const r = yield* drain(options, (now) =>
    redis
      .script("inspector_archiveBatch", [src.key, k.archived, k.taskPrefix, k.allGroups], [
        src.list ? "list" : "zset",
        size,
        unixSeconds(now),
        archiveCutoffSeconds(now),
        archiveMaxSize,
        src.group
      ])
      .pipe(Effect.flatMap(counts("inspector_archiveBatch")))
  )
  if (r.trimmed) yield* Effect.logWarning(`archiving removed ${r.trimmed} older archived task(s) to keep the archive within ${archiveMaxSize} tasks and 90 days`)
  return r.done
})

/** Deletes every task of a state (pending, scheduled, retry, archived, completed, or a group) (asynq's DeleteAll*Tasks). */
export const deleteAll = Effect.fn("Inspector.deleteAll")(function* (queue: string, state: TaskState, options: BulkOptions = {}) {
  const size = yield* check("delete", state, options)
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const src = source(k, state, options.group)
  const r = yield* drain(options, () =>
    redis
      .script("inspector_deleteBatch", [src.key, k.taskPrefix, k.allGroups, k.uniquePrefix], [src.list ? "list" : "zset", size, src.group])
      .pipe(Effect.flatMap(counts("inspector_deleteBatch")))
  )
  return r.done
})
