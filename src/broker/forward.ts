import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixMsString, unixNanosString } from "./time.js"
import { forwardLua } from "../redis/lua.generated.js"

export interface ForwardInput {
  readonly queue: string
  readonly nowMs: number
  readonly batch: number
}

/** What one `forward` call did to one queue. */
export interface ForwardReply {
  readonly scheduled: number
  readonly retry: number
  /** Ids removed without a move: dangling (no task hash), or exact-time entries that no longer matched their task. */
  readonly dropped: number
  /** The earliest due time (unix ms) of a task still scheduled or in retry, read after the moves; undefined when none is. */
  readonly nextDueMs: number | undefined
}

const isCount = (x: unknown): x is number => typeof x === "number"

/**
 * Script `forward`: due scheduled/retry tasks of one queue -> pending (or their group), at most
 * `batch`, due to the millisecond for the tasks effect-asynq wrote (lua/forward.lua); replies with
 * the earliest due time left, which the forwarder sleeps until.
 */
export const forwardScript = defineScript<ForwardInput, ForwardReply>({
  name: "forward",
  source: forwardLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.scheduled, k.retry, k.pending, k.taskPrefix, k.groupPrefix, k.allGroups, k.dueMs]
  },
  args: ({ nowMs, batch }) => [unixMsString(nowMs), unixNanosString(nowMs), batch],
  decode: (reply) => {
    if (!Array.isArray(reply) || reply.length !== 4 || !isCount(reply[0]) || !isCount(reply[1]) || !isCount(reply[2])) {
      return Result.fail(unexpectedReply("forward", reply, "[scheduled, retry, dropped, next due ms | null]"))
    }
    const next = reply[3] === null ? undefined : Number(reply[3])
    if (next !== undefined && !Number.isFinite(next))
      return Result.fail(unexpectedReply("forward", reply, "a next due time in unix ms"))
    return Result.succeed({ scheduled: reply[0], retry: reply[1], dropped: reply[2], nextDueMs: next })
  }
})
