/**
 * PeriodicTaskManager (asynq's): keeps a scheduler's entries equal to what a config provider
 * returns, syncing on an interval (default 3 min, as asynq). A new config is registered, a config
 * that is gone is unregistered, a changed one is replaced. Enqueues keep the scheduler's
 * guarantees: each occurrence of an entry is enqueued exactly once across instances.
 *
 * During a change, instances that have not synced yet run the old version for up to one sync
 * interval. An entry's claim is keyed by its id, so give configs an explicit `id` if old and new
 * versions must never both run one occurrence: they then share one claim (see entryId.ts).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { stableEntryId } from "./entryId.js"
import { type Entry, type EntryConfig, type EntryError, makeEntry } from "./entry.js"
import { ConfigProviderError } from "./errors.js"
import { makeScheduler, type SchedulerHandle, type SchedulerOptions } from "./Scheduler.js"

/** asynq's PeriodicTaskConfig: a cron spec, a task and options (here: one entry config). */
export type PeriodicTaskConfig = EntryConfig

/** Where the configs come from (a database, a file, a remote service…). */
export interface PeriodicTaskConfigProvider {
  /** Reads the current periodic-task configs (from a database, a config service, …); called on every sync. */
  readonly getConfigs: () =>
    | Effect.Effect<ReadonlyArray<PeriodicTaskConfig>, unknown>
    | Promise<ReadonlyArray<PeriodicTaskConfig>>
}

/** Settings of the periodic-task manager: the scheduler's settings, the config provider and the sync interval. */
export interface PeriodicTaskManagerOptions extends SchedulerOptions {
  readonly provider: PeriodicTaskConfigProvider
  /** How often configs are synced (default 3 min). */
  readonly syncIntervalMs?: number | undefined
}

/** What one sync changed (entry ids). A changed config appears as one removed and one added id. */
export interface SyncResult {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly unchanged: number
}

/** A running periodic-task manager: its scheduler and an on-demand sync. */
export interface PeriodicTaskManagerHandle {
  readonly scheduler: SchedulerHandle
  /** Syncs now (the interval keeps running). Fails without changing anything when the provider fails or a config is invalid. */
  readonly sync: Effect.Effect<SyncResult, ConfigProviderError | EntryError>
}

/** How often the manager syncs the configs by default (3 minutes, as asynq). */
export const defaultSyncIntervalMs = 3 * 60_000

const messageOf = (e: unknown) =>
  e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)

const fetchConfigs = (
  provider: PeriodicTaskConfigProvider
): Effect.Effect<ReadonlyArray<PeriodicTaskConfig>, ConfigProviderError> =>
  Effect.suspend(() => {
    const r = provider.getConfigs()
    return Effect.isEffect(r) ? r : Effect.tryPromise({ try: () => r, catch: (e) => e })
  }).pipe(
    Effect.mapError(
      (cause) =>
        new ConfigProviderError({ message: `the periodic task config provider failed: ${messageOf(cause)}`, cause })
    ),
    Effect.flatMap((configs) =>
      Array.isArray(configs)
        ? Effect.succeed(configs as ReadonlyArray<PeriodicTaskConfig>)
        : Effect.fail(
            new ConfigProviderError({
              message: `the periodic task config provider returned ${typeof configs}, expected an array of { spec, type, payload?, options? }`
            })
          )
    )
  )

/** Identity of an entry's content (an explicit id may keep its id while its content changes). */
const contentOf = (e: Entry) => `${e.id}|${stableEntryId(e.schedule, e.type, e.payload, e.options)}`

/** Starts a manager in the current scope: an initial sync (its failure fails the start), then one per interval. */
export const makePeriodicTaskManager = Effect.fn("PeriodicTaskManager.make")(function* (
  options: PeriodicTaskManagerOptions
) {
  const scheduler = yield* makeScheduler(options)
  const interval = options.syncIntervalMs ?? defaultSyncIntervalMs

  const sync = Effect.gen(function* () {
    const configs = yield* fetchConfigs(options.provider)
    const wanted = new Map<string, Entry>()
    for (const c of configs) {
      const e = yield* Effect.fromResult(makeEntry(c, options.timeZone))
      wanted.set(contentOf(e), e)
    }
    const current = new Map((yield* scheduler.entries).map((e) => [contentOf(e), e]))
    const removed: Array<string> = []
    const added: Array<string> = []
    for (const [k, e] of current) {
      if (wanted.has(k)) continue
      yield* scheduler.unregister(e.id).pipe(Effect.catchTag("EntryNotFound", () => Effect.void))
      removed.push(e.id)
    }
    for (const [k, e] of wanted) {
      if (current.has(k)) continue
      const r = yield* Effect.result(scheduler.register(e))
      if (Result.isSuccess(r)) added.push(r.success)
      else
        yield* Effect.logWarning(
          `periodic task manager: could not register entry ${e.id} (${e.spec} ${e.type}): ${r.failure.message}; retrying at the next sync`
        )
    }
    const result: SyncResult = { added, removed, unchanged: [...wanted.keys()].filter((k) => current.has(k)).length }
    return result
  })

  yield* sync
  const loop = Effect.sleep(interval).pipe(
    Effect.andThen(sync),
    Effect.catchCause((cause) =>
      Effect.logWarning(`periodic task manager: sync failed, keeping the current entries: ${Cause.pretty(cause)}`)
    ),
    Effect.forever
  )
  yield* Effect.forkScoped(loop, { startImmediately: true })
  const handle: PeriodicTaskManagerHandle = { scheduler, sync }
  return handle
})
