import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { doneOr, doneOrAlreadyDone } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { defineScript } from "./script.js"
import { statsExpireAt, unixMsString } from "./time.js"
import { retryLua } from "../redis/lua.generated.js"

export interface RetryInput {
  /** The message as it is to be stored (retried/errorMsg/lastFailedAt already updated). */
  readonly updated: TaskMessage
  readonly retryAtMs: number
  readonly isFailure: boolean
  readonly nowMs: number
  /** Recovery only: move the task only while its lease score is <= this (unix seconds). */
  readonly leaseCutoffSec?: number
}

/** Script `retry`: active -> retry. LeaseLost when the task is not active under a (matching) lease. */
export const retryScript = defineScript<RetryInput, void, LeaseLost>({
  name: "retry",
  source: retryLua,
  buffers: false,
  keys: ({ updated, nowMs }) => {
    const k = queueKeys(updated.queue)
    return [
      k.taskPrefix,
      k.active,
      k.lease,
      k.retry,
      k.processed(nowMs),
      k.failed(nowMs),
      k.processedTotal,
      k.failedTotal
    ]
  },
  args: (a) => [
    a.updated.id,
    bytesArg(encodeTaskMessage(a.updated)),
    unixMsString(a.retryAtMs),
    statsExpireAt(a.nowMs),
    a.isFailure ? "1" : "0",
    a.leaseCutoffSec ?? "",
    a.updated.queue
  ],
  decode: (reply, { updated }) => doneOr("retry", reply, updated, undefined, doneOrAlreadyDone)
})
