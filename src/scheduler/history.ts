/**
 * Enqueue history, as asynq keeps it: `asynq:scheduler_history:<entryId>`, a zset of
 * SchedulerEnqueueEvent (task id + enqueue time) scored by the enqueue time in unix seconds,
 * capped at the newest 1,000 events. (Read it with the inspector's `schedulerHistory`.)
 */
import { bytesArg } from "../broker/args.js"
import { unixSeconds } from "../broker/time.js"
import type { ScriptCall } from "../redis/Redis.js"
import { encodeSchedulerEnqueueEvent } from "../wire/SchedulerEnqueueEvent.js"
import { timestampFromMillis } from "../wire/Timestamp.js"
import { schedulerHistoryKey } from "./keys.js"

/** asynq keeps this many events per entry. */
export const maxHistoryEvents = 1000

/** The call that records one enqueue. */
export const historyCall = (entryId: string, taskId: string, enqueuedAtMs: number, max = maxHistoryEvents): ScriptCall => ({
  script: "scheduler_history",
  keys: [schedulerHistoryKey(entryId)],
  args: [unixSeconds(enqueuedAtMs), bytesArg(encodeSchedulerEnqueueEvent({ taskId, enqueueTime: timestampFromMillis(enqueuedAtMs) })), max]
})
