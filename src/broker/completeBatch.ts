import { Result } from "effect"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import type { CompleteOutcome } from "./complete.js"
import { unexpectedReply } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { leaseLost, ownUniqueKey } from "./leaseLost.js"
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
  buffers: false,
  keys: ({ msgs, nowMs }) => {
    const k = queueKeys(msgs[0]!.queue)
    const keys = [k.active, k.lease, k.completed, k.taskPrefix, k.processed(nowMs), k.processedTotal]
    for (const msg of msgs) for (const u of ownUniqueKey(k.prefix, msg.uniqueKey)) keys.push(u)
    return keys
  },
  args: ({ msgs, nowMs }) => {
    const prefix = queueKeys(msgs[0]!.queue).prefix
    const args: Array<ScriptArg> = [statsExpireAt(nowMs)]
    let lockIndex = 6
    for (const msg of msgs) {
      const lock = ownUniqueKey(prefix, msg.uniqueKey).length > 0 ? ++lockIndex : 0
      if (msg.retention > 0)
        args.push(msg.id, "keep", unixSeconds(nowMs) + msg.retention, bytesArg(encodeTaskMessage({ ...msg, completedAt: unixSeconds(nowMs) })), lock)
      else args.push(msg.id, "delete", 0, "", lock)
    }
    return args
  },
  decode: (reply, { msgs }) => {
    if (!Array.isArray(reply) || reply.length !== msgs.length) return Result.fail(unexpectedReply("completeBatch", reply, `an array of ${msgs.length} integers`))
    const out: Array<Result.Result<CompleteOutcome, LeaseLost>> = new Array(msgs.length)
    for (let i = 0; i < msgs.length; i++) {
      const msg = msgs[i]!
      const r: unknown = reply[i]
      if (r === 1) out[i] = msg.retention > 0 ? completed : deleted
      else if (r === 0) out[i] = Result.fail(leaseLost(msg.queue, msg.id, "complete"))
      else return Result.fail(unexpectedReply("completeBatch", reply, `an array of ${msgs.length} integers 0 or 1`))
    }
    return Result.succeed(out)
  }
})
