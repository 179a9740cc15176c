/**
 * Entry records: through which occurrence each entry is done (`through`), and the last occurrence
 * that enqueued a task (`prev`, `task`). One `scheduler_anchor` call per entry, all in one round
 * trip: it creates a missing record (through = now - lookback) and returns every record.
 */
import { Effect } from "effect"
import { RedisError } from "../redis/errors.js"
import type { Entry } from "./entry.js"
import { nextAfter } from "./cronSpec.js"
import { entryRecordKey } from "./keys.js"
import { runCalls } from "./runCalls.js"

export interface EntryRecord {
  /** Occurrences at or before this time (unix ms) are done. */
  readonly throughMs: number
  /** The last occurrence that enqueued a task (unix ms). */
  readonly prevMs: number | undefined
  readonly prevTaskId: string | undefined
}

const week = 7 * 24 * 3600 * 1000

/**
 * How long a record lives without being written: at least a week, and three times the gap
 * between the entry's next two occurrences (so a record outlives any pause between runs; a
 * record of an entry that nobody runs any more disappears on its own).
 */
export const recordTtlMs = (entry: Entry, nowMs: number): number => {
  const a = nextAfter(entry.schedule, nowMs)
  const b = nextAfter(entry.schedule, a)
  return Math.max(week, 3 * (b - a))
}

const num = (v: unknown): number | undefined => (v === null || v === undefined || v === false ? undefined : Number(String(v)))

/** Reads (and, for new entries, creates) the records of `entries`, in order. */
export const readRecords = Effect.fn("Scheduler.readRecords")(function* (entries: ReadonlyArray<Entry>, nowMs: number, lookbackMs: number) {
  const replies = yield* runCalls(
    entries.map((e) => ({
      script: "scheduler_anchor" as const,
      keys: [entryRecordKey(e.queue, e.id)],
      args: [String(Math.floor(nowMs - lookbackMs)), String(Math.ceil(recordTtlMs(e, nowMs)))]
    }))
  )
  return replies.map((r, i) => {
    if (!r.ok) return r.error
    const v = r.value
    const through = Array.isArray(v) ? num(v[0]) : undefined
    if (!Array.isArray(v) || through === undefined || Number.isNaN(through)) {
      return new RedisError({ op: "script scheduler_anchor", message: `record of entry ${entries[i]!.id} is unreadable: ${JSON.stringify(v)}` })
    }
    const prevTask = v[2]
    const rec: EntryRecord = { throughMs: through, prevMs: num(v[1]), prevTaskId: typeof prevTask === "string" ? prevTask : undefined }
    return rec
  })
})
