/**
 * `schedulerTick`: the whole scheduler as one bounded step. For every entry it reads the entry's
 * record in Redis (through which occurrence it is done), enqueues the occurrences that became due
 * since then (at most `maxCatchUp` per entry, the latest ones), each with one atomic claim + write
 * script, records the enqueues in asynq's history, and says what it did.
 *
 * A cron function triggered every minute can run it as the whole scheduler (it also publishes the
 * entries in asynq:schedulers, so asynq's tools list them); the long-lived
 * scheduler runs it whenever an occurrence is due. Overlapping ticks and any number of instances
 * are safe: an occurrence is claimed by exactly one script call (see lua/scheduler_claim.lua).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Broker } from "../broker/Broker.js"
import { registerQueueScript } from "../broker/enqueue.js"
import type { ClaimReply } from "../broker/scheduler.js"
import { historyScript } from "../broker/scheduler.js"
import { type BoundScript, bindScript, runScripts } from "../broker/script.js"
import type { InvalidArgument } from "../broker/errors.js"
import { RedisError } from "../redis/errors.js"
import { dueBetween, nextAfter } from "./cronSpec.js"
import { type Entry, type EntryConfig, makeEntry } from "./entry.js"
import type { EnqueueResult, SchedulerHooks } from "./hooks.js"
import { maxHistoryEvents } from "./history.js"
import { claimOutcome, type PreparedClaim, prepareClaim } from "./claim.js"
import { newTaskId } from "../steps/taskId.js"
import { readRecords, recordTtlMs } from "./records.js"
import { publishEntries } from "./publish.js"
import { sha256Hex } from "../hash/sha256.js"

/** The scheduler id a cron function's entries are published under: stable for the same entries. */
export const derivedSchedulerId = (entries: ReadonlyArray<Entry>): string =>
  `cron-${sha256Hex(
    entries
      .map((e) => e.id)
      .sort()
      .join(",")
  ).slice(0, 12)}`

/** Settings of `schedulerTick`: the entries, catch-up, look-back and how the entries are published. */
export interface SchedulerTickOptions {
  /** The entries (checked `Entry` values, or configs checked here; an invalid config fails the tick). */
  readonly entries: ReadonlyArray<Entry | EntryConfig>
  /** Most occurrences enqueued per entry in one tick (the latest ones); older missed ones are dropped. Default 1. */
  readonly maxCatchUp?: number | undefined
  /**
   * For an entry seen for the first time (no record in Redis): occurrences up to this far in the
   * past count as due. Default 60 s (one cron-function period), so the first invocation of a
   * function triggered at 12:00:00.8 still enqueues the 12:00 occurrence.
   */
  readonly lookbackMs?: number | undefined
  /** Time zone of configs that name none (default UTC). */
  readonly timeZone?: string | undefined
  readonly hooks?: SchedulerHooks | undefined
  /** History events kept per entry (default 1,000, as asynq). */
  readonly historyMax?: number | undefined
  /**
   * Publish the entries in `asynq:schedulers` under this scheduler id, so asynq's tools (`asynq cron
   * ls`, our inspector and CLI) list them. Default: an id derived from the entries (`cron-` and 12 hex
   * digits of a hash of their ids), the same for every overlapping invocation of one function;
   * `false`: do not publish (the long-lived Scheduler publishes its own).
   */
  readonly publishAs?: string | false | undefined
  /** How long a publication stays listed without a newer tick (default 3 min: ticks every minute keep it). */
  readonly publishTtlMs?: number | undefined
}

/** An occurrence a scheduler tick enqueued: the entry, the occurrence's time and the task. */
export interface TickEnqueued {
  readonly entryId: string
  readonly scheduledAt: Date
  readonly taskId: string
  readonly queue: string
}

/** An occurrence a scheduler tick could not enqueue, and why (it is tried again on a later tick). */
export interface TickError {
  readonly entryId: string
  readonly scheduledAt: Date | undefined
  readonly message: string
}

/** What one tick did. */
export interface SchedulerTickSummary {
  /** The tick's time. */
  readonly at: Date
  readonly entries: number
  /** Occurrences this tick enqueued. */
  readonly enqueued: ReadonlyArray<TickEnqueued>
  /** Occurrences another instance or an overlapping tick had already handled. */
  readonly alreadyDone: number
  /** Occurrences handled without a task: uniqueness lock held, or the entry's fixed task id taken. */
  readonly refused: number
  /** Occurrences a preEnqueue hook vetoed on this instance. */
  readonly vetoed: number
  /** Older due occurrences left out by `maxCatchUp` (counted up to 100 per entry). */
  readonly missed: number
  /** Entries or occurrences that failed (Redis errors); they are retried by the next tick. */
  readonly errors: ReadonlyArray<TickError>
  /** The earliest next occurrence over all entries (when the next tick has work). */
  readonly nextRunAt: Date | undefined
}

const toEntry = (e: Entry | EntryConfig, timeZone: string | undefined) =>
  "schedule" in e ? Result.succeed(e as Entry) : makeEntry(e, timeZone)

const runHook = (name: string, eff: Effect.Effect<void, unknown>) =>
  eff.pipe(Effect.catchCause((cause) => Effect.logWarning(`scheduler ${name} hook failed: ${Cause.pretty(cause)}`)))

/** One scheduler tick (see the module comment). */
export const schedulerTick = Effect.fn("Steps.schedulerTick")(function* (
  options: SchedulerTickOptions,
  /** @internal draws task ids (tests use it to force a taken id) */
  newId: () => string = newTaskId
) {
  const { knownQueues } = yield* Broker
  const freshIdAttempts = 3
  const nowMs = yield* Clock.currentTimeMillis
  const maxCatchUp = options.maxCatchUp ?? 1
  const lookbackMs = options.lookbackMs ?? 60_000
  const hooks = options.hooks ?? {}
  const entries: Array<Entry> = []
  for (const e of options.entries) entries.push(yield* Effect.fromResult(toEntry(e, options.timeZone)))

  const errors: Array<TickError> = []
  const fail = (entryId: string, scheduledAtMs: number | undefined, error: RedisError | InvalidArgument) =>
    errors.push({
      entryId,
      scheduledAt: scheduledAtMs === undefined ? undefined : new Date(scheduledAtMs),
      message: error.message
    })
  let missed = 0
  let vetoed = 0
  const post = (r: EnqueueResult) => (hooks.postEnqueue ? runHook("postEnqueue", hooks.postEnqueue(r)) : Effect.void)

  // 1. records (one round trip), 2. due occurrences and their claims
  const records = yield* readRecords(entries, nowMs, lookbackMs)
  const claims: Array<PreparedClaim> = []
  for (const [i, entry] of entries.entries()) {
    const rec = records[i]!
    if (!("throughMs" in rec)) {
      fail(entry.id, undefined, rec)
      continue
    }
    const due = dueBetween(entry.schedule, rec.throughMs, nowMs, maxCatchUp)
    missed += due.dropped
    const ttl = recordTtlMs(entry, nowMs)
    for (const t of due.times) {
      if (hooks.preEnqueue) {
        const ok = yield* hooks.preEnqueue({ entry, scheduledAt: new Date(t) }).pipe(
          Effect.as(true),
          Effect.catchCause((cause) =>
            Effect.logInfo(
              `scheduler: preEnqueue skipped entry ${entry.id} at ${new Date(t).toISOString()}: ${Cause.pretty(cause)}`
            ).pipe(Effect.as(false))
          )
        )
        if (!ok) {
          vetoed++
          continue
        }
      }
      const p = prepareClaim(entry, t, nowMs, ttl, newId)
      if (Result.isFailure(p)) {
        fail(entry.id, t, p.failure)
        yield* post({ entry, scheduledAt: new Date(t), outcome: "failed", error: p.failure })
        continue
      }
      claims.push(p.success)
    }
  }

  // 3. claims + queue registrations (one round trip per slot); a claim whose generated task id
  // turned out taken (nothing written, nothing claimed) goes again with a new id
  const queues = [...new Set(claims.map((c) => c.msg.queue))].filter((q) => !knownQueues.has(q, nowMs))
  const settled: Array<readonly [PreparedClaim, Result.Result<ClaimReply, RedisError>]> = []
  let round = claims
  for (let attempt = 0; round.length > 0 || attempt === 0; attempt++) {
    // the queue registrations ride with the first round
    const registrations = attempt === 0 ? queues.map((q) => bindScript(registerQueueScript, q)) : []
    const all = yield* runScripts<ReadonlyArray<BoundScript<void | ClaimReply, never>>>([
      ...registrations,
      ...round.map((c) => c.bound)
    ])
    if (attempt === 0) {
      queues.forEach((q, i) => {
        if (Result.isSuccess(all[i]!)) knownQueues.add(q, nowMs)
      })
    }
    const replies = all.slice(registrations.length) as ReadonlyArray<Result.Result<ClaimReply, RedisError>>
    const again: Array<PreparedClaim> = []
    round.forEach((c, i) => {
      const o = claimOutcome(c, replies[i]!)
      const retry =
        attempt < freshIdAttempts && Result.isSuccess(o) && o.success._tag === "IdTaken"
          ? prepareClaim(c.entry, c.scheduledAtMs, nowMs, recordTtlMs(c.entry, nowMs), newId)
          : undefined
      if (retry !== undefined && Result.isSuccess(retry)) again.push(retry.success)
      else settled.push([c, replies[i]!])
    })
    round = again
  }
  const enqueued: Array<TickEnqueued> = []
  const history: Array<BoundScript<number, never>> = []
  const results: Array<EnqueueResult> = []
  let alreadyDone = 0
  let refused = 0
  settled.forEach(([c, reply]) => {
    const base = { entry: c.entry, scheduledAt: new Date(c.scheduledAtMs) }
    const o = claimOutcome(c, reply)
    if (Result.isFailure(o)) {
      fail(c.entry.id, c.scheduledAtMs, o.failure)
      results.push({ ...base, outcome: "failed", error: o.failure })
      return
    }
    switch (o.success._tag) {
      case "Enqueued":
        enqueued.push({ entryId: c.entry.id, scheduledAt: base.scheduledAt, taskId: c.msg.id, queue: c.msg.queue })
        history.push(
          bindScript(historyScript, {
            entryId: c.entry.id,
            taskId: c.msg.id,
            enqueuedAtMs: nowMs,
            max: options.historyMax ?? maxHistoryEvents
          })
        )
        results.push({ ...base, outcome: "enqueued", task: o.success.task })
        return
      case "Duplicate":
        refused++
        results.push({ ...base, outcome: "duplicate", error: o.success.error })
        return
      case "IdConflict":
        refused++
        results.push({ ...base, outcome: "conflict", error: o.success.error })
        return
      case "AlreadyDone":
        alreadyDone++
        return
      case "IdTaken": {
        // Still taken after several fresh ids (only with a broken id source): not claimed, so the next tick tries again.
        const error = new RedisError({
          op: "script scheduler_claim",
          message: `periodic entry ${c.entry.id}: ${freshIdAttempts + 1} generated task ids in a row were taken in queue "${c.msg.queue}"; occurrence ${base.scheduledAt.toISOString()} left for the next tick`
        })
        fail(c.entry.id, c.scheduledAtMs, error)
        results.push({ ...base, outcome: "failed", error })
        return
      }
    }
  })

  // 4. history (one round trip per slot); a failure here loses a history line, not a task
  const historyReplies = yield* runScripts(history)
  for (const r of historyReplies)
    if (Result.isFailure(r))
      yield* Effect.logWarning(`scheduler: could not record enqueue history: ${r.failure.message}`)
  for (const r of results) yield* post(r)

  // 5. publication for asynq's tools (a failure loses a listing, not a task)
  if (options.publishAs !== false && entries.length > 0) {
    const schedulerId = options.publishAs ?? derivedSchedulerId(entries)
    yield* publishEntries(schedulerId, entries, options.publishTtlMs ?? 180_000).pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning(`scheduler: could not publish entries as ${schedulerId}: ${Cause.pretty(cause)}`)
      )
    )
  }

  const next = entries.reduce<number | undefined>((m, e) => {
    const n = nextAfter(e.schedule, nowMs)
    return m === undefined || n < m ? n : m
  }, undefined)
  const summary: SchedulerTickSummary = {
    at: new Date(nowMs),
    entries: entries.length,
    enqueued,
    alreadyDone,
    refused,
    vetoed,
    missed,
    errors,
    nextRunAt: next === undefined ? undefined : new Date(next)
  }
  return summary
})
