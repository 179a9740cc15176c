import { completeBatchLua } from "../redis/lua.generated.js"
import * as Result from "effect/Result"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import type { CompleteOutcome } from "./complete.js"
import { unexpectedReply } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { leaseLost, ownUniqueKey } from "./leaseLost.js"
import type { RedisError } from "../redis/errors.js"
import type { ScriptArg } from "../redis/Redis.js"
import { defineScript } from "./script.js"
import { statsExpireAt, unixSeconds } from "./time.js"

export interface CompleteBatchInput {
  /** Tasks of one queue (the first one's queue names the keys). */
  readonly msgs: ReadonlyArray<TaskMessage>
  readonly nowMs: number
}

/** Each task's outcome, in input order. */
export type CompleteBatchOutcomes = ReadonlyArray<Result.Result<CompleteOutcome, LeaseLost>>

const deleted = Result.succeed<CompleteOutcome>("deleted")
const completed = Result.succeed<CompleteOutcome>("completed")

/**
 * Script `completeBatch`: `complete` (complete.ts) for several tasks of one queue in one call, the
 * processed counters bumped once for all of them. Each task gets its own outcome (LeaseLost when it
 * is no longer active under a lease).
 */
export const completeBatchScript = defineScript<CompleteBatchInput, CompleteBatchOutcomes>({
  name: "completeBatch",
  source: completeBatchLua,
  buffers: false,
  keys: ({ msgs, nowMs }) => {
    const k = queueKeys(msgs[0]!.queue)
    return completionLockKeys(msgs, [
      k.active,
      k.lease,
      k.completed,
      k.taskPrefix,
      k.processed(nowMs),
      k.processedTotal
    ])
  },
  args: ({ msgs, nowMs }) => completionArgs([statsExpireAt(nowMs)], msgs, nowMs),
  decode: (reply, { msgs }) => completionOutcomes("completeBatch", reply, msgs)
})

/** The uniqueness lock keys of tasks of one queue (the order completionArgs numbers them in). */
export const completionLockKeys = (msgs: ReadonlyArray<TaskMessage>, into: Array<string>): Array<string> => {
  const prefix = queueKeys(msgs[0]!.queue).prefix
  for (const msg of msgs) for (const u of ownUniqueKey(prefix, msg.uniqueKey)) into.push(u)
  return into
}

/** Appends five entries per task (includes/completeTasks.lua): id, disposal, completed score, message, lock index (1-based, 0: none). */
export const completionArgs = (
  args: Array<ScriptArg>,
  msgs: ReadonlyArray<TaskMessage>,
  nowMs: number
): Array<ScriptArg> => {
  const prefix = queueKeys(msgs[0]!.queue).prefix
  let lockIndex = 0
  for (const msg of msgs) {
    const lock = ownUniqueKey(prefix, msg.uniqueKey).length > 0 ? ++lockIndex : 0
    if (msg.retention > 0)
      args.push(
        msg.id,
        "keep",
        unixSeconds(nowMs) + msg.retention,
        bytesArg(encodeTaskMessage({ ...msg, completedAt: unixSeconds(nowMs) })),
        lock
      )
    else args.push(msg.id, "delete", 0, "", lock)
  }
  return args
}

/** Reads the completions' part of a reply: one 1 (done), 2 (already done: a resend of a call whose reply was lost) or 0 (not active under a lease) per task. */
export const completionOutcomes = (
  script: "completeBatch" | "completeAndLease",
  reply: unknown,
  msgs: ReadonlyArray<TaskMessage>
): Result.Result<CompleteBatchOutcomes, RedisError> => {
  if (!Array.isArray(reply) || reply.length !== msgs.length)
    return Result.fail(unexpectedReply(script, reply, `an array of ${msgs.length} integers`))
  const out: Array<Result.Result<CompleteOutcome, LeaseLost>> = new Array(msgs.length)
  for (let i = 0; i < msgs.length; i++) {
    const msg = msgs[i]!
    const r: unknown = reply[i]
    if (r === 1 || r === 2) out[i] = msg.retention > 0 ? completed : deleted
    else if (r === 0) out[i] = Result.fail(leaseLost(msg.queue, msg.id, "complete"))
    else return Result.fail(unexpectedReply(script, reply, `an array of ${msgs.length} integers 0, 1 or 2`))
  }
  return Result.succeed(out)
}
