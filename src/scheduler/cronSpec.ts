/**
 * Cron specs as asynq's scheduler accepts them (robfig/cron's standard parser), turned into a
 * `Schedule` whose occurrences are absolute instants, the same on every instance:
 *
 * - 5 fields `minute hour day-of-month month day-of-week` (cron-parser syntax: lists, ranges,
 *   steps, names, `?`, `L`, `#`), evaluated in the entry's time zone (default UTC).
 * - descriptors `@yearly` `@annually` `@monthly` `@weekly` `@daily` `@midnight` `@hourly`.
 * - `@every <Go duration>` (e.g. `30s`, `1m30s`, `1h`): whole seconds, at least 1 s. Unlike
 *   asynq (which counts from the scheduler's start, so two instances tick at different moments),
 *   occurrences are the multiples of the interval since the unix epoch: `@every 30s` runs at :00
 *   and :30 of every minute, `@every 7m` at every multiple of 420 s since 1970-01-01T00:00:00Z.
 *   The time zone does not apply to it.
 * - a `CRON_TZ=<zone> ` (or `TZ=<zone> `) prefix sets the zone, overriding the option.
 */
import { CronExpressionParser } from "cron-parser"
import * as Result from "effect/Result"
import { parseGoDurationNs } from "../wire/goDuration.js"
import { InvalidCronSpec, InvalidTimeZone } from "./errors.js"

/** A parsed spec: `@every <duration>` (aligned to the unix epoch) or a cron expression in a time zone. */
export type Schedule =
  | { readonly kind: "every"; readonly spec: string; readonly everyMs: number }
  | { readonly kind: "cron"; readonly spec: string; readonly expression: string; readonly timeZone: string }

const descriptors: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
}

/** Whether `zone` is an IANA time zone name this runtime knows. */
export const checkTimeZone = (zone: string): Result.Result<string, InvalidTimeZone> => {
  const bad = (why: string) =>
    Result.fail(
      new InvalidTimeZone({
        timeZone: zone,
        message: `invalid time zone ${JSON.stringify(zone)}: ${why}; use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"`
      })
    )
  if (zone.trim() === "") return bad("it is empty")
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return Result.succeed(zone)
  } catch {
    return bad("unknown zone")
  }
}

const invalid = (spec: string, why: string) =>
  Result.fail(new InvalidCronSpec({ spec, message: `invalid cron spec ${JSON.stringify(spec)}: ${why}` }))

const fieldRanges = [
  ["minute", 0, 59],
  ["hour", 0, 23],
  ["day-of-month", 1, 31],
  ["month", 1, 12],
  ["day-of-week", 0, 7]
] as const

/** A step the field cannot take (cron-parser quietly accepts e.g. `*\/61` as "minute 0"). */
const badStep = (fields: ReadonlyArray<string>): string | undefined => {
  for (const [i, f] of fields.entries()) {
    const [name, lo, hi] = fieldRanges[i]!
    for (const m of f.matchAll(/\/(\d+)/g)) {
      const n = Number(m[1])
      if (n > hi) return `step ${n} in ${JSON.stringify(f)} is larger than the ${name} field's range ${lo}-${hi}`
    }
  }
  return undefined
}

const parseEvery = (spec: string, text: string): Result.Result<Schedule, InvalidCronSpec> => {
  let ns: bigint
  try {
    ns = parseGoDurationNs(text)
  } catch {
    return invalid(spec, `"@every" needs a Go duration such as 30s, 1m30s or 1h, got ${JSON.stringify(text)}`)
  }
  if (ns < 1_000_000_000n) return invalid(spec, `"@every" needs a duration of at least 1s, got ${JSON.stringify(text)}`)
  if (ns % 1_000_000_000n !== 0n)
    return invalid(spec, `"@every" runs on whole seconds; ${JSON.stringify(text)} has a fraction of a second`)
  return Result.succeed({ kind: "every", spec, everyMs: Number(ns / 1_000_000n) })
}

/**
 * Parses a spec (see the module comment). `timeZone` (default "UTC") applies to 5-field specs and
 * descriptors unless the spec carries its own `CRON_TZ=` prefix.
 */
export const parseSchedule = (
  spec: string,
  timeZone = "UTC"
): Result.Result<Schedule, InvalidCronSpec | InvalidTimeZone> => {
  if (typeof spec !== "string") return invalid(String(spec), "the spec must be a string")
  let text = spec.trim()
  let zone = timeZone
  const tz = /^(?:CRON_TZ|TZ)=(\S*)\s*(.*)$/.exec(text)
  if (tz) {
    zone = tz[1]!
    text = tz[2]!.trim()
  }
  const z = checkTimeZone(zone)
  if (Result.isFailure(z)) return Result.fail(z.failure)
  if (text === "")
    return invalid(
      spec,
      "it is empty; expected 5 fields (minute hour day-of-month month day-of-week), a descriptor such as @daily, or @every <duration>"
    )
  if (text.startsWith("@every")) {
    const rest = text.slice("@every".length)
    if (rest !== "" && !/^\s/.test(rest)) return invalid(spec, `unknown descriptor; did you mean "@every ${rest}"?`)
    return parseEvery(spec, rest.trim())
  }
  let expression = text
  if (text.startsWith("@")) {
    const d = descriptors[text]
    if (d === undefined)
      return invalid(
        spec,
        `unknown descriptor ${JSON.stringify(text)}; known: ${Object.keys(descriptors).join(", ")}, @every <duration>`
      )
    expression = d
  }
  const fields = expression.split(/\s+/)
  if (fields.length !== 5) {
    return invalid(spec, `expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`)
  }
  const step = badStep(fields)
  if (step !== undefined) return invalid(spec, step)
  try {
    CronExpressionParser.parse(fields.join(" "), { currentDate: new Date(0), tz: zone }).next()
  } catch (e) {
    return invalid(spec, e instanceof Error ? e.message : String(e))
  }
  return Result.succeed({ kind: "cron", spec, expression: fields.join(" "), timeZone: zone })
}

const cronFrom = (s: Extract<Schedule, { kind: "cron" }>, ms: number) =>
  CronExpressionParser.parse(s.expression, { currentDate: new Date(ms), tz: s.timeZone })

/** The first occurrence strictly after `ms` (unix ms). */
export const nextAfter = (s: Schedule, ms: number): number => {
  if (s.kind === "every") return (Math.floor(ms / s.everyMs) + 1) * s.everyMs
  return cronFrom(s, ms).next().getTime()
}

/** Occurrences in `(fromExclusive, toInclusive]`: the latest `max` of them, oldest first. */
export interface DueOccurrences {
  readonly times: ReadonlyArray<number>
  /** How many older occurrences in the window were left out because of `max` (counted up to 100). */
  readonly dropped: number
}

const dropCountLimit = 100

/** The occurrences due in `(fromExclusive, toInclusive]`, at most `max` (the latest ones). */
export const dueBetween = (s: Schedule, fromExclusive: number, toInclusive: number, max: number): DueOccurrences => {
  const times: Array<number> = []
  const dropped = 0
  if (toInclusive <= fromExclusive) return { times, dropped }
  if (s.kind === "every") {
    const latest = Math.floor(toInclusive / s.everyMs) * s.everyMs
    const first = (Math.floor(fromExclusive / s.everyMs) + 1) * s.everyMs
    const count = latest >= first ? (latest - first) / s.everyMs + 1 : 0
    for (let i = 0; i < Math.min(count, max); i++) times.unshift(latest - i * s.everyMs)
    return { times, dropped: Math.min(Math.max(0, count - max), dropCountLimit) }
  }
  // Occurrences are the forward chain next(next(…)) from `fromExclusive`: cron-parser's prev() is
  // not its mirror around DST changes (it skips New York's 03:30 on 2026-03-08 and repeats
  // Berlin's 02:30 on 2026-10-25), so it is only used to jump over a long gap.
  const limit = max + dropCountLimit
  const chain = forwardChain(s, fromExclusive, toInclusive, limit)
  if (chain.complete) return { times: chain.times.slice(-max), dropped: Math.max(0, chain.times.length - max) }
  // A long gap (more than `limit` occurrences): restart the chain a little before the latest `max`
  // (3 h earlier, so a restart point inside a repeated DST hour cannot add a phantom run).
  const back = cronFrom(s, Math.floor(toInclusive) + 1)
  let jump = toInclusive
  for (let i = 0; i < max + 2; i++) {
    try {
      jump = back.prev().getTime()
    } catch {
      break
    }
  }
  const restart = forwardChain(s, Math.max(fromExclusive, jump - 3 * 3600_000), toInclusive, Number.MAX_SAFE_INTEGER)
  return { times: restart.times.slice(-max), dropped: dropCountLimit }
}

/** next() from `from` while <= `to`, at most `limit` times; `complete` when the chain passed `to`. */
const forwardChain = (s: Extract<Schedule, { kind: "cron" }>, from: number, to: number, limit: number) => {
  const times: Array<number> = []
  const it = cronFrom(s, from)
  while (times.length < limit) {
    let t: number
    try {
      t = it.next().getTime()
    } catch {
      return { times, complete: true } // no later occurrence at all
    }
    if (t > to) return { times, complete: true }
    times.push(t)
  }
  return { times, complete: false }
}
