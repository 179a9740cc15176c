/**
 * One occurrence of an entry → one `scheduler_enqueue` script call (claim + task write, atomic),
 * and the script's reply → what happened. The task message is built as the enqueue step builds
 * it (asynq's defaults, uniqueness key, group, processIn counted from the enqueue time).
 */
import { Result } from "effect"
import { bytesArg } from "../broker/args.js"
import { DuplicateTask, type InvalidArgument, TaskIdConflict } from "../broker/errors.js"
import { unixNanosString, unixSeconds } from "../broker/time.js"
import { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import { resolveEnqueueOptions } from "../steps/options.js"
import { newTaskId } from "../steps/taskId.js"
import { type TaskInfo, taskInfoFromMessage } from "../steps/taskInfo.js"
import { queueKeys, type TaskState } from "../wire/keys.js"
import { emptyTaskMessage, encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { uniqueKey } from "../wire/uniqueKey.js"
import type { Entry } from "./entry.js"
import { entryRecordKey } from "./keys.js"

/** A ready claim: the message to write and the script call that claims and writes it. */
export interface PreparedClaim {
  readonly entry: Entry
  readonly scheduledAtMs: number
  /** The task id was drawn at random (not the entry's `taskId` option): if taken, draw another. */
  readonly generatedId: boolean
  readonly msg: TaskMessage
  readonly state: TaskState
  readonly nextProcessAt: Date | undefined
  readonly call: ScriptCall
}

/** What a claim did. Only `enqueued` wrote a task; every outcome but `alreadyDone` handled the occurrence here. */
export type ClaimOutcome =
  | { readonly _tag: "Enqueued"; readonly task: TaskInfo }
  | { readonly _tag: "Duplicate"; readonly error: DuplicateTask }
  | { readonly _tag: "IdConflict"; readonly error: TaskIdConflict }
  | { readonly _tag: "AlreadyDone"; readonly throughMs: number }
  /** The generated id was taken; nothing was written or claimed: prepare again with a new id. */
  | { readonly _tag: "IdTaken" }

/** Builds the message and the claim call for `entry` at `scheduledAtMs`, enqueued at `nowMs` (`newId` draws a task id when the entry has none). */
export const prepareClaim = (
  entry: Entry,
  scheduledAtMs: number,
  nowMs: number,
  recordTtlMs: number,
  newId: () => string = newTaskId
): Result.Result<PreparedClaim, InvalidArgument> =>
  Result.map(resolveEnqueueOptions(entry.type, entry.options, nowMs), (o) => {
    const msg: TaskMessage = {
      ...emptyTaskMessage,
      type: entry.type,
      payload: entry.payload,
      id: o.taskId ?? newId(),
      queue: o.queue,
      retry: o.maxRetry,
      timeout: o.timeoutSec,
      deadline: o.deadlineSec,
      uniqueKey: o.uniqueMs === undefined ? "" : uniqueKey(o.queue, entry.type, entry.payload),
      retention: o.retentionSec,
      groupKey: o.group ?? "",
      headers: o.headers
    }
    const k = queueKeys(o.queue)
    let state: TaskState
    let target: string
    let arg6: string | number
    let lockTtl: number | undefined = o.uniqueMs
    let nextProcessAt: Date | undefined
    if (o.processAtMs !== undefined) {
      state = "scheduled"
      target = k.scheduled
      arg6 = unixSeconds(o.processAtMs)
      if (lockTtl !== undefined) lockTtl = o.processAtMs - nowMs + lockTtl
      nextProcessAt = new Date(o.processAtMs)
    } else if (o.group !== undefined) {
      state = "aggregating"
      target = k.group(o.group)
      arg6 = unixSeconds(nowMs)
    } else {
      state = "pending"
      target = k.pending
      arg6 = unixNanosString(nowMs)
      nextProcessAt = new Date(nowMs)
    }
    const lock = lockTtl === undefined ? [] : [msg.uniqueKey]
    const call: ScriptCall = {
      script: "scheduler_enqueue",
      keys: [entryRecordKey(o.queue, entry.id), k.taskPrefix, target, k.allGroups, ...lock],
      args: [
        String(scheduledAtMs), String(Math.ceil(recordTtlMs)), msg.id, bytesArg(encodeTaskMessage(msg)), state, arg6, o.group ?? "", o.queue,
        lockTtl === undefined ? 0 : Math.max(1, Math.ceil(lockTtl)),
        o.taskId === undefined ? "1" : "0"
      ]
    }
    return { entry, scheduledAtMs, generatedId: o.taskId === undefined, msg, state, nextProcessAt, call }
  })

const badReply = (v: unknown) =>
  new RedisError({ op: "script scheduler_enqueue", message: `script scheduler_enqueue replied ${JSON.stringify(v) ?? String(v)}, expected [code, through]; is another script loaded under its SHA?` })

/** The script's reply as a claim outcome (or the RedisError of the call). */
export const claimOutcome = (p: PreparedClaim, reply: BatchReply): Result.Result<ClaimOutcome, RedisError> => {
  if (!reply.ok) return Result.fail(reply.error)
  const v = reply.value
  if (!Array.isArray(v) || v.length !== 2) return Result.fail(badReply(v))
  const code = Number(v[0])
  const { queue, id, type, uniqueKey: lockKey } = p.msg
  switch (code) {
    case 1:
      return Result.succeed({ _tag: "Enqueued", task: taskInfoFromMessage(p.msg, p.state, { nextProcessAt: p.nextProcessAt }) })
    case 0:
      return Result.succeed({
        _tag: "IdConflict",
        error: new TaskIdConflict({ queue, id, message: `task ID conflicts with another task: a task with id "${id}" already exists in queue "${queue}" (periodic entry ${p.entry.id}, occurrence ${new Date(p.scheduledAtMs).toISOString()} skipped)` })
      })
    case -1:
      return Result.succeed({
        _tag: "Duplicate",
        error: new DuplicateTask({ queue, type, uniqueKey: lockKey, message: `task already exists: a task of type "${type}" with the same payload is still unique-locked in queue "${queue}" (lock ${lockKey}; periodic entry ${p.entry.id}, occurrence ${new Date(p.scheduledAtMs).toISOString()} skipped)` })
      })
    case -2:
      return Result.succeed({ _tag: "AlreadyDone", throughMs: Number(v[1]) })
    case 2:
      return Result.succeed({ _tag: "IdTaken" })
    default:
      return Result.fail(badReply(v))
  }
}
