/**
 * The long-lived scheduler (asynq's Scheduler): a scoped Effect that holds registered entries,
 * runs `schedulerTick` whenever an occurrence is due (sleeping until the earliest next run, woken
 * early when entries change), and publishes its entries for asynq's tools every 10 s. Closing the
 * scope stops it and withdraws the published entries. Any number of instances may run the same
 * entries: every occurrence is enqueued exactly once (see tick.ts).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import type { Broker } from "../broker/Broker.js"
import type { RedisError } from "../redis/errors.js"
import { type Entry, type EntryConfig, type EntryError, makeEntry } from "./entry.js"
import { DuplicateEntry, EntryNotFound } from "./errors.js"
import type { SchedulerHooks } from "./hooks.js"
import { defaultHeartbeatMs, publishEntries, withdrawEntries } from "./publish.js"
import { newSchedulerId } from "./schedulerId.js"
import { readRecords } from "./records.js"
import { schedulerTick, type SchedulerTickSummary } from "./tick.js"

/** Settings of a long-lived scheduler: time zone, catch-up, hooks and what it publishes for asynq's tools. */
export interface SchedulerOptions {
  /** Instance id, published as `asynq:schedulers:{<id>}` (default `host:pid:uuid`, as asynq). */
  readonly id?: string | undefined
  /** Time zone of entries that name none (default UTC; asynq's SchedulerOpts.Location). */
  readonly timeZone?: string | undefined
  /** How often the entries are published (default 10 s; they live twice as long). */
  readonly heartbeatIntervalMs?: number | undefined
  /** Most occurrences enqueued per entry after a pause (default 1: only the latest missed one). */
  readonly maxCatchUp?: number | undefined
  /** Wait after a failed tick (Redis unreachable…) before the next try (default 1 s). */
  readonly retryDelayMs?: number | undefined
  readonly hooks?: SchedulerHooks | undefined
}

/** A running scheduler (`makeScheduler`): register and unregister entries, list them, and see the last tick. */
export interface SchedulerHandle {
  readonly id: string
  /**
   * Registers an entry and returns its id. The entry's record is created now (if no instance has
   * one yet), so its first run is the first occurrence after this call.
   */
  readonly register: (config: EntryConfig | Entry) => Effect.Effect<string, EntryError | DuplicateEntry | RedisError>
  /** Stops enqueueing an entry (on this instance). */
  readonly unregister: (entryId: string) => Effect.Effect<void, EntryNotFound>
  /** The registered entries. */
  readonly entries: Effect.Effect<ReadonlyArray<Entry>>
  /** What the latest tick did (undefined before the first). */
  readonly lastTick: Effect.Effect<SchedulerTickSummary | undefined>
}

/** Starts a scheduler in the current scope (it stops, and withdraws its entries, when the scope closes). */
export const makeScheduler = Effect.fn("Scheduler.make")(function* (options: SchedulerOptions = {}) {
  const id = options.id ?? newSchedulerId()
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const last = yield* Ref.make<SchedulerTickSummary | undefined>(undefined)
  const changed = yield* Latch.make(false)
  const retryDelayMs = options.retryDelayMs ?? 1000
  const heartbeatMs = options.heartbeatIntervalMs ?? defaultHeartbeatMs
  const list = Effect.map(Ref.get(entries), (m) => [...m.values()])
  // Publishing reads the records and rewrites the list; one at a time, so the last write is the freshest.
  const publishLock = yield* Semaphore.make(1)
  const publish = Effect.gen(function* () {
    const current = yield* list
    yield* publishEntries(id, current, 2 * heartbeatMs)
  }).pipe(
    publishLock.withPermit,
    Effect.catchCause((cause) =>
      Effect.logWarning(`scheduler ${id}: could not publish entries: ${Cause.pretty(cause)}`)
    )
  )

  const register = (
    config: EntryConfig | Entry
  ): Effect.Effect<string, EntryError | DuplicateEntry | RedisError, Broker> =>
    Effect.gen(function* () {
      const entry = "schedule" in config ? config : yield* Effect.fromResult(makeEntry(config, options.timeZone))
      if ((yield* Ref.get(entries)).has(entry.id)) {
        return yield* new DuplicateEntry({
          entryId: entry.id,
          message: `entry ${entry.id} is already registered (same spec, time zone, task and options, or the same id); unregister it first or give it another id`
        })
      }
      const now = yield* Clock.currentTimeMillis
      const [rec] = yield* readRecords([entry], now, 0)
      if (rec !== undefined && !("throughMs" in rec)) return yield* Effect.fail(rec)
      yield* Ref.update(entries, (m) => new Map(m).set(entry.id, entry))
      yield* changed.open
      return entry.id
    })

  const unregister = (entryId: string) =>
    Effect.gen(function* () {
      const m = yield* Ref.get(entries)
      if (!m.has(entryId))
        return yield* new EntryNotFound({
          entryId,
          message: `no entry with id ${JSON.stringify(entryId)} is registered with scheduler ${id}`
        })
      const next = new Map(m)
      next.delete(entryId)
      yield* Ref.set(entries, next)
      yield* changed.open
    })

  // One round: tick, then sleep until the earliest next occurrence or a change of entries.
  const round = Effect.gen(function* () {
    yield* changed.close
    const current = yield* list
    if (current.length === 0) return yield* changed.await
    const outcome = yield* Effect.result(
      schedulerTick({
        entries: current,
        lookbackMs: 0,
        maxCatchUp: options.maxCatchUp,
        timeZone: options.timeZone,
        hooks: options.hooks,
        publishAs: false
      })
    )
    let wait = retryDelayMs
    if (Result.isSuccess(outcome)) {
      yield* Ref.set(last, outcome.success)
      if (outcome.success.enqueued.length > 0) yield* publish // show the new prev times at once
      for (const e of outcome.success.errors)
        yield* Effect.logWarning(`scheduler ${id}: entry ${e.entryId}: ${e.message}`)
      const now = yield* Clock.currentTimeMillis
      const next = outcome.success.nextRunAt?.getTime()
      if (outcome.success.errors.length === 0 && next !== undefined) wait = Math.max(0, next - now)
    } else {
      yield* Effect.logWarning(
        `scheduler ${id}: tick failed, retrying in ${retryDelayMs} ms: ${outcome.failure.message}`
      )
    }
    yield* Effect.raceFirst(Effect.sleep(wait), changed.await)
  })

  const heartbeat = publish.pipe(Effect.andThen(Effect.sleep(heartbeatMs)))

  yield* Effect.addFinalizer(() =>
    withdrawEntries(id).pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning(`scheduler ${id}: could not withdraw entries: ${Cause.pretty(cause)}`)
      )
    )
  )
  yield* Effect.forkScoped(Effect.forever(round), { startImmediately: true })
  yield* Effect.forkScoped(Effect.forever(heartbeat), { startImmediately: true })

  const context = yield* Effect.context<Broker>()
  const handle: SchedulerHandle = {
    id,
    register: (config) => register(config).pipe(Effect.provideContext(context)),
    unregister,
    entries: list,
    lastTick: Ref.get(last)
  }
  return handle
})
