import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { readSchedulerEntries, readSchedulerHistory } from "../broker/scheduler.js"
import { decodeSchedulerEnqueueEvent } from "../wire/SchedulerEnqueueEvent.js"
import { decodeSchedulerEntry } from "../wire/SchedulerEntry.js"
import { isGoZeroTime, timestampToDate } from "../wire/Timestamp.js"
import { InvalidArgument } from "./errors.js"
import { defaultPageSize } from "./listTasks.js"
import type { EnqueueEventDetails, SchedulerEntryDetails } from "./serverTypes.js"

/**
 * Entries of every running scheduler (Go asynq's or ours), soonest next run first (asynq's
 * SchedulerEntries). Schedulers whose heartbeat expired are left out; undecodable items too.
 */
export const schedulerEntries = Effect.fn("Inspector.schedulerEntries")(function* () {
  const nowSec = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  const out: Array<SchedulerEntryDetails> = []
  for (const bytes of yield* readSchedulerEntries(nowSec)) {
    try {
      const e = decodeSchedulerEntry(bytes)
      out.push({
        id: e.id,
        spec: e.spec,
        taskType: e.taskType,
        taskPayload: e.taskPayload,
        options: e.enqueueOptions,
        next: timestampToDate(e.nextEnqueueTime),
        prev:
          isGoZeroTime(e.prevEnqueueTime) || (e.prevEnqueueTime.seconds === 0 && e.prevEnqueueTime.nanos === 0)
            ? undefined
            : timestampToDate(e.prevEnqueueTime)
      })
    } catch {
      // a foreign or corrupt item: skip it, like asynq
    }
  }
  return out.sort((a, b) => a.next.getTime() - b.next.getTime())
})

/** What one scheduler entry enqueued, newest first, paged like task listings (asynq's ListSchedulerEnqueueEvents). */
export const schedulerHistory = Effect.fn("Inspector.schedulerHistory")(function* (
  entryId: string,
  options: { readonly page?: number; readonly pageSize?: number } = {}
) {
  const page = options.page ?? 1
  const size = options.pageSize ?? defaultPageSize
  if (!Number.isInteger(page) || page < 1)
    return yield* new InvalidArgument({ field: "page", message: `page must be a whole number >= 1, got ${page}` })
  if (!Number.isInteger(size) || size < 1)
    return yield* new InvalidArgument({
      field: "pageSize",
      message: `page size must be a whole number >= 1, got ${size}`
    })
  const start = (page - 1) * size
  const members = yield* readSchedulerHistory(entryId, start, start + size - 1)
  const out: Array<EnqueueEventDetails> = []
  for (const m of members) {
    try {
      const e = decodeSchedulerEnqueueEvent(m)
      out.push({ taskId: e.taskId, enqueuedAt: timestampToDate(e.enqueueTime) })
    } catch {
      // skip undecodable members
    }
  }
  return out
})
