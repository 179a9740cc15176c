/**
 * A periodic-task entry: what to enqueue (task type, payload, enqueue options) and when (a cron
 * spec in a time zone). Everything is checked when the entry is made, so a bad spec, zone,
 * option or payload fails at registration with a typed error, never later at run time.
 */
import * as Result from "effect/Result"
import { InvalidArgument } from "../broker/errors.js"
import { type EnqueueOptions, resolveEnqueueOptions } from "../steps/options.js"
import { encodePayload } from "../wire/payload.js"
import { parseSchedule, type Schedule } from "./cronSpec.js"
import { stableEntryId } from "./entryId.js"
import type { InvalidCronSpec, InvalidTimeZone } from "./errors.js"
import { enqueueOptionStrings } from "./optionStrings.js"

/** What a caller registers (asynq's PeriodicTaskConfig: Cronspec, Task, Opts). */
export interface EntryConfig {
  /** Cron spec: 5 fields, a descriptor (`@daily`…), `@every <duration>`, optionally `CRON_TZ=<zone> ` first. */
  readonly spec: string
  /** Task type. */
  readonly type: string
  /** Task payload: bytes, a string (UTF-8) or a JSON value (see encodePayload). */
  readonly payload?: unknown
  /** Options of every enqueued task (queue, maxRetry, timeout, unique, processIn, …). */
  readonly options?: EnqueueOptions | undefined
  /** Time zone of the spec (default: the scheduler's, which defaults to UTC). */
  readonly timeZone?: string | undefined
  /** Entry id (default: derived from spec, zone, type, payload and options; see entryId.ts). */
  readonly id?: string | undefined
}

/** A checked entry. */
export interface Entry {
  readonly id: string
  readonly spec: string
  readonly schedule: Schedule
  readonly type: string
  readonly payload: Uint8Array | undefined
  readonly options: EnqueueOptions
  /** The options in Go's `Option.String()` form, as published in asynq's SchedulerEntry. */
  readonly optionStrings: ReadonlyArray<string>
  /** The queue its tasks go to (its per-entry claim key lives in that queue's cluster slot). */
  readonly queue: string
}

/** Why an entry was refused at registration: its spec, its time zone, or an option or payload. */
export type EntryError = InvalidCronSpec | InvalidTimeZone | InvalidArgument

const fail = (field: string, message: string) => Result.fail(new InvalidArgument({ field, message }))

/** Checks a config and builds the entry (pure). */
export const makeEntry = (config: EntryConfig, defaultTimeZone = "UTC"): Result.Result<Entry, EntryError> => {
  if (typeof config !== "object" || config === null)
    return fail("entry", `an entry must be an object { spec, type, payload?, options? }, got ${String(config)}`)
  const schedule = parseSchedule(config.spec, config.timeZone ?? defaultTimeZone)
  if (Result.isFailure(schedule)) return Result.fail(schedule.failure)
  const options = config.options ?? {}
  const resolved = resolveEnqueueOptions(config.type, options, 0)
  if (Result.isFailure(resolved)) return Result.fail(resolved.failure)
  let payload: Uint8Array | undefined
  try {
    payload = encodePayload(config.payload)
  } catch (e) {
    return fail("payload", e instanceof Error ? e.message : String(e))
  }
  let id: string
  if (config.id !== undefined) {
    if (typeof config.id !== "string" || !/^\S{1,200}$/.test(config.id)) {
      return fail("id", `an entry id must be 1 to 200 characters without whitespace, got ${JSON.stringify(config.id)}`)
    }
    id = config.id
  } else {
    id = stableEntryId(schedule.success, config.type, payload, options)
  }
  return Result.succeed({
    id,
    spec: config.spec,
    schedule: schedule.success,
    type: config.type,
    payload,
    options,
    optionStrings: enqueueOptionStrings(options),
    queue: resolved.success.queue
  })
}
