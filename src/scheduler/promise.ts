/**
 * Promise facade of the scheduler and the periodic task manager, for code that does not use Effect:
 *
 *   const scheduler = createScheduler({ redis: { url: process.env.REDIS_URL } })
 *   await scheduler.register({ spec: "@every 30s", type: "ping" })
 *   await scheduler.start()
 *   // …
 *   await scheduler.shutdown()
 *
 * Entries may be registered before or after `start()`; an invalid one rejects at once with
 * InvalidCronSpec, InvalidTimeZone or InvalidArgument. Rejections carry the typed error objects.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Broker } from "../broker/Broker.js"
import type { RedisOptions } from "../redis/options.js"
import { makeBrokerRuntime, type PromiseRuntime } from "../runtime/promiseRuntime.js"
import { type Entry, type EntryConfig, makeEntry } from "./entry.js"
import { DuplicateEntry, EntryNotFound } from "./errors.js"
import type { EnqueueAttempt, EnqueueResult, SchedulerHooks } from "./hooks.js"
import { makePeriodicTaskManager, type PeriodicTaskConfigProvider, type SyncResult } from "./PeriodicTaskManager.js"
import { makeScheduler, type SchedulerHandle, type SchedulerOptions } from "./Scheduler.js"
import type { SchedulerTickSummary } from "./tick.js"

/** The scheduler is not running (not started yet, or shut down). */
export class SchedulerNotRunning extends Data.TaggedError("SchedulerNotRunning")<{ readonly message: string }> {}

/** The scheduler's hooks as plain or async functions (for `createScheduler`). */
export interface PromiseHooks {
  /** Before this instance tries an occurrence; throwing (or rejecting) skips it on this instance. */
  readonly preEnqueue?: (attempt: EnqueueAttempt) => void | Promise<void>
  /** After this instance handled an occurrence (enqueued, refused or failed). Errors are logged. */
  readonly postEnqueue?: (result: EnqueueResult) => void | Promise<void>
}

/** Options of `createScheduler`: where Redis is, the scheduler's settings and its hooks. */
export interface CreateSchedulerOptions extends Omit<SchedulerOptions, "hooks"> {
  /** Redis connection (default: REDIS_URL, then redis://127.0.0.1:6379). */
  readonly redis?: RedisOptions | undefined
  readonly hooks?: PromiseHooks | undefined
}

/** The long-lived scheduler as Promises (`createScheduler`). */
export interface PromiseScheduler {
  /** Registers an entry; returns its id. Before `start()` it is kept until then. */
  register(config: EntryConfig): Promise<string>
  /** Unregisters an entry (rejects with EntryNotFound). */
  unregister(entryId: string): Promise<void>
  /** Connects and starts ticking and publishing (rejects if already started or shut down). */
  start(): Promise<void>
  /** Stops, withdraws the published entries and closes the connection. Safe to call twice. */
  shutdown(): Promise<void>
  /** The registered entries. */
  entries(): Promise<ReadonlyArray<Entry>>
  /** What the latest tick did. */
  lastTick(): Promise<SchedulerTickSummary | undefined>
}

const hook = <A>(f: ((a: A) => void | Promise<void>) | undefined) =>
  f === undefined ? undefined : (a: A) => Effect.tryPromise({ try: async () => f(a), catch: (e) => e })

const effectHooks = (h: PromiseHooks | undefined): SchedulerHooks => ({
  preEnqueue: hook(h?.preEnqueue),
  postEnqueue: hook(h?.postEnqueue)
})

interface Running<H> {
  readonly runtime: PromiseRuntime<Broker>
  readonly handle: H
}

/** Connects (Broker + Redis on the facades' shared runtime) and makes the handle, whose resources live until `stop`; on failure nothing stays open. */
const startIn = async <H, E>(
  redis: RedisOptions | undefined,
  make: Effect.Effect<H, E, Broker | Scope.Scope>
): Promise<Running<H>> => {
  const runtime = makeBrokerRuntime(redis)
  try {
    return { runtime, handle: await runtime.runScoped(make) }
  } catch (e) {
    await runtime.close()
    throw e
  }
}

/** Stops what `startIn` started and closes its connection. */
const stop = (r: Running<unknown>) => r.runtime.close()

/** A long-lived scheduler with a Promise API (asynq's NewScheduler / Register / Start / Shutdown). */
export const createScheduler = (options: CreateSchedulerOptions = {}): PromiseScheduler => {
  const { redis, hooks, ...rest } = options
  const schedulerOptions: SchedulerOptions = { ...rest, hooks: effectHooks(hooks) }
  const waiting = new Map<string, Entry>()
  let running: Running<SchedulerHandle> | undefined
  let state: "new" | "starting" | "running" | "stopped" = "new"
  const notRunning = () =>
    new SchedulerNotRunning({
      message:
        state === "stopped"
          ? "the scheduler was shut down; create a new one"
          : "the scheduler is not started yet; call start() first"
    })

  return {
    async register(config) {
      if (running) return Effect.runPromise(running.handle.register(config))
      if (state === "stopped") throw notRunning()
      const entry = await Effect.runPromise(Effect.fromResult(makeEntry(config, options.timeZone)))
      if (waiting.has(entry.id))
        throw new DuplicateEntry({
          entryId: entry.id,
          message: `entry ${entry.id} is already registered (same spec, time zone, task and options, or the same id); unregister it first or give it another id`
        })
      waiting.set(entry.id, entry)
      return entry.id
    },
    async unregister(entryId) {
      if (running) return Effect.runPromise(running.handle.unregister(entryId))
      if (!waiting.delete(entryId))
        throw new EntryNotFound({ entryId, message: `no entry with id ${JSON.stringify(entryId)} is registered` })
    },
    async start() {
      if (state !== "new")
        throw new SchedulerNotRunning({ message: `start() was already called (the scheduler is ${state})` })
      state = "starting"
      try {
        running = await startIn(redis, makeScheduler(schedulerOptions))
        for (const e of waiting.values()) await Effect.runPromise(running.handle.register(e))
        waiting.clear()
        state = "running"
      } catch (e) {
        const r = running
        running = undefined
        state = "stopped"
        if (r) await stop(r)
        throw e
      }
    },
    async shutdown() {
      const r = running
      running = undefined
      state = "stopped"
      if (r) await stop(r)
    },
    async entries() {
      return running ? Effect.runPromise(running.handle.entries) : [...waiting.values()]
    },
    async lastTick() {
      if (!running) return undefined
      return Effect.runPromise(running.handle.lastTick)
    }
  }
}

/** Options of `createPeriodicTaskManager`: the scheduler's, plus the config provider and the sync interval. */
export interface CreatePeriodicTaskManagerOptions extends CreateSchedulerOptions {
  /** `getConfigs()` returns the configs (a Promise or an Effect). */
  readonly provider: PeriodicTaskConfigProvider
  /** Default 3 min. */
  readonly syncIntervalMs?: number | undefined
}

/** The periodic-task manager as Promises (`createPeriodicTaskManager`). */
export interface PromisePeriodicTaskManager {
  /** Connects, syncs once (rejects if the provider fails or a config is invalid), then syncs on the interval. */
  start(): Promise<void>
  /** Syncs now. */
  sync(): Promise<SyncResult>
  /** The entries the manager runs now. */
  entries(): Promise<ReadonlyArray<Entry>>
  /** Stops syncing and the scheduler, withdraws its published entries and closes the connection. */
  shutdown(): Promise<void>
}

/** asynq's NewPeriodicTaskManager with a Promise API. */
export const createPeriodicTaskManager = (options: CreatePeriodicTaskManagerOptions): PromisePeriodicTaskManager => {
  const { redis, hooks, ...rest } = options
  let running: Running<Effect.Success<ReturnType<typeof makePeriodicTaskManager>>> | undefined
  let started = false
  const need = () => {
    if (!running)
      throw new SchedulerNotRunning({ message: "the periodic task manager is not running; call start() first" })
    return running
  }
  return {
    async start() {
      if (started) throw new SchedulerNotRunning({ message: "start() was already called" })
      started = true
      running = await startIn(redis, makePeriodicTaskManager({ ...rest, hooks: effectHooks(hooks) }))
    },
    sync: async () => Effect.runPromise(need().handle.sync),
    entries: async () => Effect.runPromise(need().handle.scheduler.entries),
    async shutdown() {
      const r = running
      running = undefined
      if (r) await stop(r)
    }
  }
}
