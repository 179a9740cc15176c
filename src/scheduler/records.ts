/**
 * Entry records: through which occurrence each entry is done (`through`), and the last occurrence
 * that enqueued a task (`prev`, `task`). One `scheduler_record` call per entry, all in one round
 * trip: it creates a missing record (through = now - lookback) and returns every record.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { recordScript } from "../broker/scheduler.js"
import { bindScript, runScripts } from "../broker/script.js"
import type { Entry } from "./entry.js"
import { nextAfter } from "./cronSpec.js"

export type { EntryRecord } from "../broker/scheduler.js"

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

/** Reads (and, for new entries, creates) the records of `entries`, in order (a RedisError in place of an unreadable one). */
export const readRecords = Effect.fn("Scheduler.readRecords")(function* (
  entries: ReadonlyArray<Entry>,
  nowMs: number,
  lookbackMs: number
) {
  const outcomes = yield* runScripts(
    entries.map((e) =>
      bindScript(recordScript, {
        queue: e.queue,
        entryId: e.id,
        newThroughMs: nowMs - lookbackMs,
        ttlMs: recordTtlMs(e, nowMs)
      })
    )
  )
  return outcomes.map((r) => (Result.isSuccess(r) ? r.success : r.failure))
})
