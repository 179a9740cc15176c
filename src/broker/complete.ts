import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { doneOr, doneOrAlreadyDone } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { ownUniqueKey } from "./leaseLost.js"
import { defineScript } from "./script.js"
import { statsExpireAt, unixSeconds } from "./time.js"
import { completeLua } from "../redis/lua.generated.js"

export type CompleteOutcome = "deleted" | "completed"

export interface CompleteInput {
  readonly msg: TaskMessage
  readonly nowMs: number
}

/**
 * Script `complete`: active -> deleted, or -> completed when `msg.retention` > 0 (the message is
 * stored with `completedAt` = now); releases the task's uniqueness lock. LeaseLost when the task is
 * no longer active.
 */
export const completeScript = defineScript<CompleteInput, CompleteOutcome, LeaseLost>({
  name: "complete",
  source: completeLua,
  buffers: false,
  keys: ({ msg, nowMs }) => {
    const k = queueKeys(msg.queue)
    const keys = [k.active, k.lease, k.completed, k.taskPrefix, k.processed(nowMs), k.processedTotal]
    for (const u of ownUniqueKey(k.prefix, msg.uniqueKey)) keys.push(u)
    return keys
  },
  args: ({ msg, nowMs }) =>
    msg.retention > 0
      ? [
          msg.id,
          statsExpireAt(nowMs),
          "keep",
          unixSeconds(nowMs) + msg.retention,
          bytesArg(encodeTaskMessage({ ...msg, completedAt: unixSeconds(nowMs) }))
        ]
      : [msg.id, statsExpireAt(nowMs), "delete", 0, ""],
  decode: (reply, { msg }) =>
    doneOr("complete", reply, msg, msg.retention > 0 ? ("completed" as const) : ("deleted" as const), doneOrAlreadyDone)
})
