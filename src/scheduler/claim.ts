/**
 * One occurrence of an entry → one `scheduler_claim` script call (claim + task write, atomic;
 * see src/broker/scheduler.ts), and its outcome. The task message is built as the enqueue step
 * builds it (asynq's defaults, uniqueness key, group, processIn counted from the enqueue time).
 */
import * as Result from "effect/Result"
import type { DuplicateTask, InvalidArgument, TaskIdConflict } from "../broker/errors.js"
import { claimScript, type ClaimReply } from "../broker/scheduler.js"
import { type BoundScript, bindScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import { resolveEnqueueOptions } from "../steps/options.js"
import { newTaskId } from "../steps/taskId.js"
import { type TaskInfo, taskInfoFromMessage } from "../steps/taskInfo.js"
import type { TaskState } from "../wire/keys.js"
import { emptyTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { uniqueKey } from "../wire/uniqueKey.js"
import type { Entry } from "./entry.js"

/** A ready claim: the message to write and the script call that claims and writes it. */
export interface PreparedClaim {
  readonly entry: Entry
  readonly scheduledAtMs: number
  /** The task id was drawn at random (not the entry's `taskId` option): if taken, draw another. */
  readonly generatedId: boolean
  readonly msg: TaskMessage
  readonly state: TaskState
  readonly nextProcessAt: Date | undefined
  readonly bound: BoundScript<ClaimReply, never>
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
    let state: TaskState
    let lockTtlMs: number | undefined = o.uniqueMs
    let nextProcessAt: Date | undefined
    if (o.processAtMs !== undefined) {
      state = "scheduled"
      if (lockTtlMs !== undefined) lockTtlMs = o.processAtMs - nowMs + lockTtlMs
      nextProcessAt = new Date(o.processAtMs)
    } else if (o.group !== undefined) {
      state = "aggregating"
    } else {
      state = "pending"
      nextProcessAt = new Date(nowMs)
    }
    const generatedId = o.taskId === undefined
    const bound = bindScript(claimScript, {
      entryId: entry.id,
      scheduledAtMs,
      nowMs,
      recordTtlMs,
      msg,
      state,
      processAtMs: o.processAtMs,
      lockTtlMs,
      generatedId
    })
    return { entry, scheduledAtMs, generatedId, msg, state, nextProcessAt, bound }
  })

/** The claim's outcome (or the RedisError of its call). */
export const claimOutcome = (
  p: PreparedClaim,
  reply: Result.Result<ClaimReply, RedisError>
): Result.Result<ClaimOutcome, RedisError> =>
  Result.map(
    reply,
    (r): ClaimOutcome =>
      r._tag === "Enqueued"
        ? { _tag: "Enqueued", task: taskInfoFromMessage(p.msg, p.state, { nextProcessAt: p.nextProcessAt }) }
        : r
  )
