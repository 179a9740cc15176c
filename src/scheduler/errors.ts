/** Errors of the scheduler: every one says what was wrong and what is accepted instead. */
import * as Data from "effect/Data"

/** A cron spec the scheduler cannot run (syntax, ranges, an `@every` duration, a descriptor). */
export class InvalidCronSpec extends Data.TaggedError("InvalidCronSpec")<{
  readonly spec: string
  readonly message: string
}> {}

/** A time zone that is not an IANA zone name (e.g. "Europe/Berlin", "UTC"). */
export class InvalidTimeZone extends Data.TaggedError("InvalidTimeZone")<{
  readonly timeZone: string
  readonly message: string
}> {}

/** No entry with this id is registered with this scheduler. */
export class EntryNotFound extends Data.TaggedError("EntryNotFound")<{
  readonly entryId: string
  readonly message: string
}> {}

/** Two registrations resolve to the same entry id (same spec, zone, task and options, or the same explicit id). */
export class DuplicateEntry extends Data.TaggedError("DuplicateEntry")<{
  readonly entryId: string
  readonly message: string
}> {}

/** The config provider of a PeriodicTaskManager failed or returned something that is not a list of configs. */
export class ConfigProviderError extends Data.TaggedError("ConfigProviderError")<{
  readonly message: string
  readonly cause?: unknown
}> {}
