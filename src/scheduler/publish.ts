/**
 * Publishing what a scheduler instance runs, as asynq does, so asynq's CLI and web UI list it:
 * `asynq:schedulers:{<schedulerId>}` — a list of protobuf SchedulerEntry (LPUSH in ascending next
 * run order, so the head is the entry due last), TTL 20 s — and the instance's member in the zset
 * `asynq:schedulers` (score = now + 20 s). The long-lived scheduler rewrites both every 10 s and
 * withdraws them on shutdown. `prev_enqueue_time` is the last occurrence any instance enqueued
 * (from the entry's record), Go's zero time when none has.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { announceScript, publishEntriesScript, readRecordPrevs } from "../broker/scheduler.js"
import { bindScript, runScripts } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import { encodeSchedulerEntry, type SchedulerEntry } from "../wire/SchedulerEntry.js"
import { goZeroTime, timestampFromMillis } from "../wire/Timestamp.js"
import { nextAfter } from "./cronSpec.js"
import type { Entry } from "./entry.js"
import { schedulerEntriesKey } from "../wire/keys.js"

/** asynq's heartbeat: entries rewritten every 10 s, living 20 s. */
export const defaultHeartbeatMs = 10_000

/** The asynq SchedulerEntry of each entry (prev from the records), in ascending next-run order. */
export const describeEntries = Effect.fn("Scheduler.describeEntries")(function* (entries: ReadonlyArray<Entry>) {
  const nowMs = yield* Clock.currentTimeMillis
  const prevs = yield* readRecordPrevs(entries.map((e) => ({ queue: e.queue, entryId: e.id })))
  return entries
    .map((e, i): SchedulerEntry => {
      const prev = prevs[i]
      return {
        id: e.id,
        spec: e.spec,
        taskType: e.type,
        taskPayload: e.payload,
        enqueueOptions: e.optionStrings,
        nextEnqueueTime: timestampFromMillis(nextAfter(e.schedule, nowMs)),
        prevEnqueueTime: prev ? timestampFromMillis(Number(prev)) : goZeroTime
      }
    })
    .sort(
      (a, b) =>
        a.nextEnqueueTime.seconds - b.nextEnqueueTime.seconds || a.nextEnqueueTime.nanos - b.nextEnqueueTime.nanos
    )
})

/** Writes the instance's entries list and announces it (two scripts, one round trip per slot). */
export const publishEntries = Effect.fn("Scheduler.publishEntries")(function* (
  schedulerId: string,
  entries: ReadonlyArray<Entry>,
  ttlMs = 2 * defaultHeartbeatMs
) {
  const nowMs = yield* Clock.currentTimeMillis
  const described = yield* describeEntries(entries)
  const key = schedulerEntriesKey(schedulerId)
  const [written, announced] = yield* runScripts([
    bindScript(publishEntriesScript, { key, ttlMs, entries: described.map(encodeSchedulerEntry) }),
    bindScript(announceScript, {
      key,
      expiresAtSec: unixSeconds(nowMs + ttlMs),
      dropBeforeSec: unixSeconds(nowMs - 60_000)
    })
  ])
  yield* Effect.fromResult(written)
  yield* Effect.fromResult(announced)
  return described.length
})

/** Removes the instance's entries list and its member of `asynq:schedulers` (shutdown). */
export const withdrawEntries = Effect.fn("Scheduler.withdrawEntries")(function* (schedulerId: string) {
  const nowMs = yield* Clock.currentTimeMillis
  const key = schedulerEntriesKey(schedulerId)
  const [deleted, removed] = yield* runScripts([
    bindScript(publishEntriesScript, { key, ttlMs: 0, entries: [] }),
    bindScript(announceScript, { key, expiresAtSec: "remove", dropBeforeSec: unixSeconds(nowMs - 60_000) })
  ])
  yield* Effect.fromResult(deleted)
  yield* Effect.fromResult(removed)
})
