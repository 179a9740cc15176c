import { Effect } from "effect"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { asIntegers } from "./replies.js"
import { statsExpireAt, unixSeconds } from "./time.js"

/** asynq's archive limits: tasks archived more than 90 days ago, and beyond 10,000 entries, are deleted. */
export const archiveMaxAgeMs = 90 * 24 * 60 * 60 * 1000
export const archiveMaxSize = 10_000

export interface ArchiveArgs {
  /** The message as it is to be stored (errorMsg/lastFailedAt already updated). */
  readonly updated: TaskMessage
  readonly nowMs: number
  readonly maxAgeMs?: number
  readonly maxSize?: number
  /** Recovery only: move the task only while its lease score is <= this (unix seconds). */
  readonly leaseCutoffSec?: number
}

/**
 * Script `archive`: active -> archived, then trims the archive. Returns `moved` false when the
 * task is not active under a (matching) lease, and how many old archived tasks were deleted.
 */
export const archiveActive = Effect.fnUntraced(function* (a: ArchiveArgs) {
  const { redis } = yield* Broker
  const m = a.updated
  const k = queueKeys(m.queue)
  const keys = [k.taskPrefix, k.active, k.lease, k.archived, k.processed(a.nowMs), k.failed(a.nowMs), k.processedTotal, k.failedTotal]
  const args = [
    m.id,
    bytesArg(encodeTaskMessage(m)),
    unixSeconds(a.nowMs),
    unixSeconds(a.nowMs - (a.maxAgeMs ?? archiveMaxAgeMs)),
    Math.max(1, Math.floor(a.maxSize ?? archiveMaxSize)),
    statsExpireAt(a.nowMs),
    a.leaseCutoffSec ?? ""
  ]
  const [moved, trimmed] = yield* asIntegers("archive", yield* redis.script("archive", keys, args), 2)
  return { moved: moved === 1, trimmed: trimmed! }
})
