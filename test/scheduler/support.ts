/** Helpers of the scheduler tests: raw reads of what the scheduler wrote, and entries. */
import type { Redis as IORedis } from "ioredis"
import { Result } from "effect"
import { type Entry, type EntryConfig, makeEntry } from "../../src/scheduler/entry.js"
import { entryRecordKey } from "../../src/broker/scheduler.js"
import { decodeSchedulerEnqueueEvent } from "../../src/wire/SchedulerEnqueueEvent.js"
import { schedulerHistoryKey, queueKeys } from "../../src/wire/keys.js"

export const at = (iso: string) => Date.parse(iso)

/** A checked entry (throws on a bad config: test setup). */
export const entry = (config: EntryConfig, tz?: string): Entry => {
  const r = makeEntry(config, tz)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

/** Ids in the pending list, oldest first. */
export const pendingIds = async (c: IORedis, queue: string) =>
  (await c.lrange(queueKeys(queue).pending, 0, -1)).reverse()

/** History events of an entry, oldest first: [taskId, enqueue ms, score]. */
export const historyOf = async (c: IORedis, entryId: string) => {
  const raw = await c.zrangeBuffer(schedulerHistoryKey(entryId), "0", "-1", "WITHSCORES")
  const out: Array<{ taskId: string; enqueuedAtMs: number; score: number }> = []
  for (let i = 0; i < raw.length; i += 2) {
    const e = decodeSchedulerEnqueueEvent(raw[i]!)
    out.push({
      taskId: e.taskId,
      enqueuedAtMs: e.enqueueTime.seconds * 1000 + Math.floor(e.enqueueTime.nanos / 1e6),
      score: Number(raw[i + 1]!.toString())
    })
  }
  return out
}

/** The entry's record hash. */
export const recordOf = (c: IORedis, e: Entry) => c.hgetall(entryRecordKey(e.queue, e.id))
