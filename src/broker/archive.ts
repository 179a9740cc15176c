import * as Result from "effect/Result"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { coded, doneOrAlreadyDone, integersReply } from "./decode.js"
import type { LeaseLost } from "./errors.js"
import { defineScript } from "./script.js"
import { statsExpireAt, unixNanosString, unixSeconds } from "./time.js"
import { archiveLua } from "../redis/lua.generated.js"

/** asynq's archive limits: tasks archived more than 90 days ago, and beyond 10,000 entries, are deleted. */
export const archiveMaxAgeMs = 90 * 24 * 60 * 60 * 1000
export const archiveMaxSize = 10_000

/** Archived tasks scored below this (unix seconds) are past the 90 days. */
export const archiveCutoffSeconds = (nowMs: number): number => unixSeconds(nowMs - archiveMaxAgeMs)

export interface ArchiveInput {
  /** The message as it is to be stored (errorMsg/lastFailedAt already updated). */
  readonly updated: TaskMessage
  readonly nowMs: number
  readonly maxAgeMs?: number
  readonly maxSize?: number
  /** Recovery only: move the task only while its lease score is <= this (unix seconds). */
  readonly leaseCutoffSec?: number
}

/**
 * Script `archive`: active -> archived, then trims the archive; returns how many old archived
 * tasks were deleted. LeaseLost when the task is not active under a (matching) lease.
 */
export const archiveScript = defineScript<ArchiveInput, { readonly trimmed: number }, LeaseLost>({
  name: "archive",
  source: archiveLua,
  buffers: false,
  keys: ({ updated, nowMs }) => {
    const k = queueKeys(updated.queue)
    return [
      k.taskPrefix,
      k.active,
      k.lease,
      k.archived,
      k.processed(nowMs),
      k.failed(nowMs),
      k.processedTotal,
      k.failedTotal
    ]
  },
  args: (a) => [
    a.updated.id,
    bytesArg(encodeTaskMessage(a.updated)),
    unixSeconds(a.nowMs),
    unixSeconds(a.nowMs - (a.maxAgeMs ?? archiveMaxAgeMs)),
    Math.max(1, Math.floor(a.maxSize ?? archiveMaxSize)),
    statsExpireAt(a.nowMs),
    a.leaseCutoffSec ?? "",
    unixNanosString(a.nowMs)
  ],
  decode: (reply, { updated }) =>
    Result.flatMap(integersReply("archive", reply, 2), ([moved, trimmed]) =>
      Result.map(coded("archive", moved!, updated, doneOrAlreadyDone), () => ({ trimmed: trimmed! }))
    )
})
