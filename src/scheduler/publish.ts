/**
 * Publishing what a scheduler instance runs, as asynq does, so asynq's CLI and web UI list it:
 * `asynq:schedulers:{<schedulerId>}` — a list of protobuf SchedulerEntry (LPUSH in ascending next
 * run order, so the head is the entry due last), TTL 20 s — and the instance's member in the zset
 * `asynq:schedulers` (score = now + 20 s). The long-lived scheduler rewrites both every 10 s and
 * withdraws them on shutdown. `prev_enqueue_time` is the last occurrence any instance enqueued
 * (from the entry's record), Go's zero time when none has.
 */
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"
import { Clock, Effect } from "effect"
import { bytesArg } from "../broker/args.js"
import { Broker } from "../broker/Broker.js"
import { unixSeconds } from "../broker/time.js"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply } from "../redis/Redis.js"
import { encodeSchedulerEntry, type SchedulerEntry } from "../wire/SchedulerEntry.js"
import { goZeroTime, timestampFromMillis } from "../wire/Timestamp.js"
import { nextAfter } from "./cronSpec.js"
import type { Entry } from "./entry.js"
import { allSchedulers, entryRecordKey, schedulerEntriesKey } from "./keys.js"
import { runCalls } from "./runCalls.js"

/** asynq's heartbeat: entries rewritten every 10 s, living 20 s. */
export const defaultHeartbeatMs = 10_000

/** A scheduler instance id as asynq makes them: `host:pid:uuid`. */
export const newSchedulerId = (): string => `${hostname()}:${process.pid}:${randomUUID()}`

/** The asynq SchedulerEntry of each entry (prev from the records), in ascending next-run order. */
export const describeEntries = Effect.fn("Scheduler.describeEntries")(function* (entries: ReadonlyArray<Entry>) {
  const { redis } = yield* Broker
  const nowMs = yield* Clock.currentTimeMillis
  const prevs = yield* redis.use("hget scheduler records", (c) => Promise.all(entries.map((e) => c.hget(entryRecordKey(e.queue, e.id), "prev"))))
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
    .sort((a, b) => a.nextEnqueueTime.seconds - b.nextEnqueueTime.seconds || a.nextEnqueueTime.nanos - b.nextEnqueueTime.nanos)
})

const firstError = (rs: ReadonlyArray<BatchReply>): RedisError | undefined => {
  for (const r of rs) if (!r.ok) return r.error
  return undefined
}

/** Writes the instance's entries list and announces it (two scripts, one round trip per slot). */
export const publishEntries = Effect.fn("Scheduler.publishEntries")(function* (schedulerId: string, entries: ReadonlyArray<Entry>, ttlMs = 2 * defaultHeartbeatMs) {
  const nowMs = yield* Clock.currentTimeMillis
  const described = yield* describeEntries(entries)
  const key = schedulerEntriesKey(schedulerId)
  const rs = yield* runCalls([
    { script: "scheduler_publish", keys: [key], args: [Math.ceil(ttlMs), ...described.map((d) => bytesArg(encodeSchedulerEntry(d)))] },
    { script: "scheduler_announce", keys: [allSchedulers], args: [key, unixSeconds(nowMs + ttlMs), unixSeconds(nowMs - 60_000)] }
  ])
  const err = firstError(rs)
  if (err) return yield* Effect.fail(err)
  return described.length
})

/** Removes the instance's entries list and its member of `asynq:schedulers` (shutdown). */
export const withdrawEntries = Effect.fn("Scheduler.withdrawEntries")(function* (schedulerId: string) {
  const nowMs = yield* Clock.currentTimeMillis
  const key = schedulerEntriesKey(schedulerId)
  const rs = yield* runCalls([
    { script: "scheduler_publish", keys: [key], args: [0] },
    { script: "scheduler_announce", keys: [allSchedulers], args: [key, "remove", unixSeconds(nowMs - 60_000)] }
  ])
  const err = firstError(rs)
  if (err) return yield* Effect.fail(err)
})
