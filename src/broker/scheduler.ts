/**
 * The scheduler's scripts and reads: claiming an occurrence (claim + task write, atomic), entry
 * records, enqueue history, and the entries published for asynq's tools.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { RedisError } from "../redis/errors.js"
import { allSchedulers, queueKeys, schedulerHistoryKey, type TaskState } from "../wire/keys.js"
import { encodeSchedulerEnqueueEvent } from "../wire/SchedulerEnqueueEvent.js"
import { timestampFromMillis } from "../wire/Timestamp.js"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { integerReply, unexpectedReply } from "./decode.js"
import type { DuplicateTask, TaskIdConflict } from "./errors.js"
import { codeError } from "./replyCodes.js"
import { defineScript } from "./script.js"
import { unixMsString, unixNanosString, unixSeconds } from "./time.js"
import {
  scheduler_announceLua,
  scheduler_claimLua,
  scheduler_historyLua,
  scheduler_publishLua,
  scheduler_recordLua
} from "../redis/lua.generated.js"

/**
 * The record of one periodic entry: `asynq:{<queue>}:scheduler:<entryId>` (hash: through, prev,
 * task). asynq's scheduler keys come from src/wire/keys.ts; this record, which makes enqueues
 * exactly-once, is ours. It lives in the slot of the queue the entry enqueues to, so the claim and
 * the task write can be one atomic script on a Redis Cluster too.
 */
export const entryRecordKey = (queue: string, entryId: string): string =>
  `${queueKeys(queue).prefix}scheduler:${entryId}`

/** One occurrence to claim and write. */
export interface ClaimInput {
  readonly entryId: string
  readonly scheduledAtMs: number
  readonly nowMs: number
  readonly recordTtlMs: number
  /** The task (its uniqueKey is the lock key when `lockTtlMs` is set). */
  readonly msg: TaskMessage
  readonly state: TaskState
  /** Scheduled: when it is due. */
  readonly processAtMs?: number | undefined
  /** Uniqueness lock TTL (ms), from now. */
  readonly lockTtlMs?: number | undefined
  /** The task id was drawn at random: a taken id answers IdTaken rather than IdConflict. */
  readonly generatedId: boolean
}

/** What a claim did (the script's codes; IdConflict and Duplicate are outcomes here, not failures). */
export type ClaimReply =
  | { readonly _tag: "Enqueued" }
  | { readonly _tag: "Duplicate"; readonly error: DuplicateTask }
  | { readonly _tag: "IdConflict"; readonly error: TaskIdConflict }
  | { readonly _tag: "AlreadyDone"; readonly throughMs: number }
  /** The generated id was taken; nothing was written or claimed: prepare again with a new id. */
  | { readonly _tag: "IdTaken" }

const claimDetail = (i: ClaimInput) =>
  `periodic entry ${i.entryId}, occurrence ${new Date(i.scheduledAtMs).toISOString()} skipped`

/** Script `scheduler_claim`: claims one occurrence of an entry and writes its task, atomically. */
export const claimScript = defineScript<ClaimInput, ClaimReply>({
  name: "scheduler_claim",
  source: scheduler_claimLua,
  buffers: false,
  keys: (i) => {
    const k = queueKeys(i.msg.queue)
    const target =
      i.state === "scheduled" ? k.scheduled : i.state === "aggregating" ? k.group(i.msg.groupKey) : k.pending
    const keys = [entryRecordKey(i.msg.queue, i.entryId), k.taskPrefix, target, k.allGroups]
    if (i.lockTtlMs !== undefined) keys.push(i.msg.uniqueKey)
    return keys
  },
  args: (i) => [
    String(i.scheduledAtMs),
    String(Math.ceil(i.recordTtlMs)),
    i.msg.id,
    bytesArg(encodeTaskMessage(i.msg)),
    i.state,
    i.state === "scheduled"
      ? unixMsString(i.processAtMs!)
      : i.state === "aggregating"
        ? unixSeconds(i.nowMs)
        : unixNanosString(i.nowMs),
    i.msg.groupKey,
    i.msg.queue,
    i.lockTtlMs === undefined ? 0 : Math.max(1, Math.ceil(i.lockTtlMs)),
    i.generatedId ? "1" : "0"
  ],
  decode: (v, i) => {
    if (!Array.isArray(v) || v.length !== 2)
      return Result.fail(unexpectedReply("scheduler_claim", v, "[code, through]"))
    const code = Number(v[0])
    switch (code) {
      case 1:
        return Result.succeed({ _tag: "Enqueued" })
      case 0:
        return Result.succeed({
          _tag: "IdConflict",
          error: codeError("scheduler_claim", 0, { msg: i.msg, detail: claimDetail(i) }) as TaskIdConflict
        })
      case -1:
        return Result.succeed({
          _tag: "Duplicate",
          error: codeError("scheduler_claim", -1, { msg: i.msg, detail: claimDetail(i) }) as DuplicateTask
        })
      case -2:
        return Result.succeed({ _tag: "AlreadyDone", throughMs: Number(v[1]) })
      case 2:
        return Result.succeed({ _tag: "IdTaken" })
      default:
        return Result.fail(unexpectedReply("scheduler_claim", v, "[code, through] with code 1, 0, -1, -2 or 2"))
    }
  }
})

export interface EntryRecord {
  /** Occurrences at or before this time (unix ms) are done. */
  readonly throughMs: number
  /** The last occurrence that enqueued a task (unix ms). */
  readonly prevMs: number | undefined
  readonly prevTaskId: string | undefined
}

const num = (v: unknown): number | undefined =>
  v === null || v === undefined || v === false ? undefined : Number(String(v))

/** Script `scheduler_record`: an entry's record, created (through = `newThroughMs`) when missing. */
export const recordScript = defineScript<
  { readonly queue: string; readonly entryId: string; readonly newThroughMs: number; readonly ttlMs: number },
  EntryRecord
>({
  name: "scheduler_record",
  source: scheduler_recordLua,
  buffers: false,
  keys: (i) => [entryRecordKey(i.queue, i.entryId)],
  args: (i) => [String(Math.floor(i.newThroughMs)), String(Math.ceil(i.ttlMs))],
  decode: (v, i) => {
    const through = Array.isArray(v) ? num(v[0]) : undefined
    if (!Array.isArray(v) || through === undefined || Number.isNaN(through)) {
      return Result.fail(
        new RedisError({
          op: "script scheduler_record",
          message: `record of entry ${i.entryId} is unreadable: ${JSON.stringify(v)}`
        })
      )
    }
    const prevTask = v[2]
    return Result.succeed({
      throughMs: through,
      prevMs: num(v[1]),
      prevTaskId: typeof prevTask === "string" ? prevTask : undefined
    })
  }
})

/** Script `scheduler_history`: records one enqueue of an entry, keeping the newest `max` events. */
export const historyScript = defineScript<
  { readonly entryId: string; readonly taskId: string; readonly enqueuedAtMs: number; readonly max: number },
  number
>({
  name: "scheduler_history",
  source: scheduler_historyLua,
  buffers: false,
  keys: (i) => [schedulerHistoryKey(i.entryId)],
  args: (i) => [
    unixSeconds(i.enqueuedAtMs),
    bytesArg(encodeSchedulerEnqueueEvent({ taskId: i.taskId, enqueueTime: timestampFromMillis(i.enqueuedAtMs) })),
    i.max
  ],
  decode: (reply) => integerReply("scheduler_history", reply)
})

/** Script `scheduler_publish`: rewrites a scheduler instance's entries list (none: deletes it). */
export const publishEntriesScript = defineScript<
  { readonly key: string; readonly ttlMs: number; readonly entries: ReadonlyArray<Uint8Array> },
  number
>({
  name: "scheduler_publish",
  source: scheduler_publishLua,
  buffers: false,
  keys: (i) => [i.key],
  args: (i) => [Math.ceil(i.ttlMs), ...i.entries.map(bytesArg)],
  decode: (reply) => integerReply("scheduler_publish", reply)
})

/** Script `scheduler_announce`: the instance's member of `asynq:schedulers` (expiry unix seconds, or "remove"); drops members expired before `dropBeforeSec`. */
export const announceScript = defineScript<
  { readonly key: string; readonly expiresAtSec: number | "remove"; readonly dropBeforeSec: number },
  number
>({
  name: "scheduler_announce",
  source: scheduler_announceLua,
  buffers: false,
  keys: () => [allSchedulers],
  args: (i) => [i.key, i.expiresAtSec, i.dropBeforeSec],
  decode: (reply) => integerReply("scheduler_announce", reply)
})

/** The `prev` field (last enqueued occurrence, unix ms as a string) of each record, null when none. */
export const readRecordPrevs = Effect.fn("Broker.readRecordPrevs")(function* (
  records: ReadonlyArray<{ readonly queue: string; readonly entryId: string }>
) {
  const { redis } = yield* Broker
  return yield* Effect.forEach(
    records,
    (r) =>
      redis.command("hget scheduler records", ["HGET", entryRecordKey(r.queue, r.entryId), "prev"]) as Effect.Effect<
        string | null,
        RedisError
      >,
    {
      concurrency: "unbounded"
    }
  )
})

/** The SchedulerEntry bytes of every scheduler instance whose listing has not expired at `nowSec`. */
export const readSchedulerEntries = Effect.fn("Broker.readSchedulerEntries")(function* (nowSec: number) {
  const { redis } = yield* Broker
  const keys = yield* redis.use("zrangebyscore asynq:schedulers", (c) => c.zrangebyscore(allSchedulers, nowSec, "+inf"))
  const lists = yield* redis.use("lrange scheduler entries", (c) =>
    Promise.all(keys.map((k) => c.lrangeBuffer(k, 0, -1)))
  )
  return lists.flat()
})

/** SchedulerEnqueueEvent bytes of one entry's history, newest first, ranks `start`..`stop`. */
export const readSchedulerHistory = Effect.fn("Broker.readSchedulerHistory")(function* (
  entryId: string,
  start: number,
  stop: number
) {
  const { redis } = yield* Broker
  return yield* redis.use("zrevrange scheduler history", (c) =>
    c.zrevrangeBuffer(schedulerHistoryKey(entryId), start, stop)
  )
})
