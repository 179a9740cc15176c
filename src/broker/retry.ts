import { Effect } from "effect"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { asInteger } from "./replies.js"
import { statsExpireAt, unixSeconds } from "./time.js"

export interface RetryArgs {
  /** The message as it is to be stored (retried/errorMsg/lastFailedAt already updated). */
  readonly updated: TaskMessage
  readonly retryAtMs: number
  readonly isFailure: boolean
  readonly nowMs: number
  /** Recovery only: move the task only while its lease score is <= this (unix seconds). */
  readonly leaseCutoffSec?: number
}

/** Script `retry`: active -> retry. Returns false when the task is not active under a (matching) lease. */
export const retryActive = Effect.fnUntraced(function* (a: RetryArgs) {
  const { redis } = yield* Broker
  const m = a.updated
  const k = queueKeys(m.queue)
  const keys = [k.taskPrefix, k.active, k.lease, k.retry, k.processed(a.nowMs), k.failed(a.nowMs), k.processedTotal, k.failedTotal]
  const args = [m.id, bytesArg(encodeTaskMessage(m)), unixSeconds(a.retryAtMs), statsExpireAt(a.nowMs), a.isFailure ? "1" : "0", a.leaseCutoffSec ?? ""]
  return (yield* asInteger("retry", yield* redis.script("retry", keys, args))) === 1
})
