/**
 * Enqueue options: what a caller may ask for, checked before anything is written, with asynq's
 * defaults. Times are milliseconds or Dates here; asynq's message stores whole seconds.
 */
import * as Result from "effect/Result"
import { InvalidArgument } from "../broker/errors.js"
import { limitKeyHeader } from "../wire/keys.js"

/** Options of an enqueue (durations in milliseconds; times as a Date or unix milliseconds). The enqueueing guide lists defaults and limits. */
export interface EnqueueOptions {
  /** Queue name. Default "default". No lone UTF-16 surrogate (true of every string option, header names and values, and the task type). */
  readonly queue?: string | undefined
  /** How many times a failed task is retried. Default 25. A whole number >= 0. */
  readonly maxRetry?: number | undefined
  /** How long one attempt may run, ms (stored as whole seconds, rounded up; at most `maxDurationMs`). 0 or absent: 30 min unless `deadline` is set. */
  readonly timeout?: number | undefined
  /** Time by which the task must finish (Date or unix ms, at most `maxInstantMs`). Alone, it means no per-attempt timeout. */
  readonly deadline?: Date | number | undefined
  /** Uniqueness TTL, ms (1000 to `maxDurationMs`): while the lock lives, a task with the same queue, type and payload is rejected with DuplicateTask. */
  readonly unique?: number | undefined
  /** Process at this time (Date or unix ms, at most `maxInstantMs`). In the past or now: enqueued as pending. */
  readonly processAt?: Date | number | undefined
  /** Process after this delay, ms (at most `maxDurationMs`). 0: enqueued as pending. */
  readonly processIn?: number | undefined
  /** Task id. Default: 13 random base62 characters (regenerated if taken). A custom id that a task in the queue already has gives TaskIdConflict. */
  readonly taskId?: string | undefined
  /** Keep the task this long after it completes, ms (stored as whole seconds, rounded up; at most `maxDurationMs`). Default 0: deleted on completion. */
  readonly retention?: number | undefined
  /** Aggregation group: the task waits in the group until the aggregator combines the group into one task. */
  readonly group?: string | undefined
  /** String headers carried with the task. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * Limit key (e.g. `"customer:42"`, at most `maxLimitKeyLength` characters): the task is held to its
   * queue's per-key limits (`setQueueLimit(queue, { perKey })`) and keys with waiting tasks are served
   * round robin. Until its key has room the task waits in the scheduled state. Not with
   * `processAt`, `processIn` or `group`.
   */
  readonly limitKey?: string | undefined
}

/** Options after validation, in asynq's units. */
export interface ResolvedEnqueueOptions {
  readonly queue: string
  readonly maxRetry: number
  readonly timeoutSec: number
  /** Unix seconds, 0 = none. */
  readonly deadlineSec: number
  readonly uniqueMs: number | undefined
  /** Set only when the task is due after `now` (it goes to the scheduled set). */
  readonly processAtMs: number | undefined
  readonly taskId: string | undefined
  readonly retentionSec: number
  readonly group: string | undefined
  readonly headers: Readonly<Record<string, string>>
  /** The limit key (also in `headers` under `limitKeyHeader`). */
  readonly limitKey: string | undefined
}

/** The header a task's limit key travels in (defined in wire/keys.ts). */
export { limitKeyHeader }
/** The longest limit key, in characters. */
export const maxLimitKeyLength = 1024

/** The queue a task goes to when no `queue` is given. */
export const defaultQueue = "default"
/** How many times a failed task is retried when no `maxRetry` is given (asynq's default). */
export const defaultMaxRetry = 25
/** A task's timeout in seconds when neither `timeout` nor `deadline` is given (30 minutes, asynq's default). */
export const defaultTimeoutSec = 30 * 60
export const maxQueueNameLength = 255
const int32Max = 2 ** 31 - 1

/**
 * The longest duration option (timeout, unique, processIn, retention), ms: 9,223,372,036 whole
 * seconds, about 292 years. asynq stores timeout and retention as int64 seconds and Go reads them
 * (and its Unique/ProcessIn options) as a time.Duration, int64 nanoseconds: 2^63-1 ns rounded down to
 * whole seconds is the most that survives the round trip without wrapping negative. Well under
 * 2^53, so exact as a JS number, and now + this is a valid JS Date and a valid Redis expiry.
 */
export const maxDurationMs = 9_223_372_036_000
/**
 * The latest date option (processAt, deadline): 9999-12-31T23:59:59.999Z. Dates start at the unix
 * epoch (asynq stores them as unix seconds, 0 meaning "none"); Go's time.Time can be formatted
 * as RFC 3339 (asynq's Inspector, JSON) only up to the year 9999, and the unix seconds of every date
 * in between are exact in a Redis score (a double) and in JS.
 */
export const maxInstantMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const durationLimit = `${maxDurationMs} ms (about 292 years: asynq stores it as whole seconds and reads it as a Go time.Duration)`
const instantLimit = `${new Date(maxInstantMs).toISOString()} (unix ms ${maxInstantMs}; dates run from 1970 to the year 9999)`

const knownOptions: ReadonlySet<string> = new Set([
  "queue",
  "maxRetry",
  "timeout",
  "deadline",
  "unique",
  "processAt",
  "processIn",
  "taskId",
  "retention",
  "group",
  "headers",
  "limitKey"
])

class Invalid {
  constructor(readonly error: InvalidArgument) {}
}
const invalid = (field: string, message: string): never => {
  throw new Invalid(new InvalidArgument({ field, message }))
}
const show = (v: unknown): string =>
  typeof v === "string"
    ? JSON.stringify(v)
    : v instanceof Date
      ? Number.isNaN(v.getTime())
        ? "Invalid Date"
        : v.toISOString()
      : String(v)

/** `String.prototype.isWellFormed` (Node 20 has it; the ES2022 lib this project compiles against does not type it). */
const isWellFormed = (String.prototype as { readonly isWellFormed?: (this: string) => boolean }).isWellFormed

/**
 * Index of the first lone UTF-16 surrogate in `s`, or -1. The native check answers the usual case;
 * the search (with the `u` flag a well-formed pair is one code point, so the class matches only an
 * unpaired half) only runs to name the index.
 */
const loneSurrogateAt = (s: string): number =>
  isWellFormed !== undefined && isWellFormed.call(s) ? -1 : s.search(/[\uD800-\uDFFF]/u)

/**
 * Refuses a string with a lone surrogate: UTF-8 (Redis keys, the protobuf message) cannot encode it,
 * so it would be stored as U+FFFD and no longer match what was asked for.
 */
const wellFormed = (field: string, s: string, what: string): string => {
  const at = loneSurrogateAt(s)
  if (at >= 0)
    invalid(
      field,
      `${what} ${show(s)} contains a lone UTF-16 surrogate at index ${at} (UTF-8 cannot encode it, so it would be stored altered)`
    )
  return s
}

const nonBlank = (field: string, v: unknown, what: string): string => {
  if (typeof v !== "string" || v.trim() === "")
    invalid(field, `${what} must be a non-empty string (not only whitespace), got ${show(v)}`)
  return v as string
}

/** A queue name asynq accepts, and one whose keys stay in one Redis Cluster slot. */
const queueName = (v: unknown): string => {
  const q = nonBlank("queue", v, "queue name")
  if (q.length > maxQueueNameLength)
    invalid("queue", `queue name is ${q.length} characters long; at most ${maxQueueNameLength} are allowed`)
  if (/[{}]/.test(q))
    invalid(
      "queue",
      `queue name ${show(q)} contains '{' or '}', which would break the Redis Cluster hash tag of its keys`
    )
  return wellFormed("queue", q, "queue name")
}

const duration = (field: string, v: unknown, min = 0): number => {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
    invalid(field, `${field} must be a finite number of milliseconds >= ${min}, got ${show(v)}`)
  }
  if ((v as number) > maxDurationMs) invalid(field, `${field} must be at most ${durationLimit}, got ${show(v)}`)
  return v as number
}

const instant = (field: string, v: unknown): number => {
  const ms = v instanceof Date ? v.getTime() : v
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    invalid(field, `${field} must be a valid Date or a unix time in milliseconds >= 0, got ${show(v)}`)
  }
  if ((ms as number) > maxInstantMs) invalid(field, `${field} must be at most ${instantLimit}, got ${show(v)}`)
  return ms as number
}

const headersOf = (v: unknown): Readonly<Record<string, string>> => {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    invalid("headers", `headers must be an object of string values, got ${show(v)}`)
  for (const [k, x] of Object.entries(v as object)) {
    if (typeof x !== "string") invalid("headers", `header ${JSON.stringify(k)} must be a string, got ${typeof x}`)
    wellFormed("headers", k, "header name")
    wellFormed("headers", x, `header ${show(k)} value`)
  }
  return { ...(v as Record<string, string>) }
}

const attempt = <A>(f: () => A): Result.Result<A, InvalidArgument> => {
  try {
    return Result.succeed(f())
  } catch (e) {
    if (e instanceof Invalid) return Result.fail(e.error)
    throw e
  }
}

/**
 * Checks a queue name: not empty or only whitespace (as asynq), at most 255 characters, no
 * '{' or '}' (stricter than asynq: they would split the queue's keys across Redis Cluster slots),
 * and no lone UTF-16 surrogate.
 */
export const checkQueueName = (queue: string): Result.Result<string, InvalidArgument> => attempt(() => queueName(queue))

/** Checks that a string bound for the wire has no lone UTF-16 surrogate (`field` and `what` name it in the error). */
export const checkWellFormed = (field: string, s: string, what: string): Result.Result<string, InvalidArgument> =>
  attempt(() => wellFormed(field, s, what))

/** Checks a duration in ms against `min` and `maxDurationMs` (`field` names it in the error). */
export const checkDurationMs = (field: string, ms: number, min = 0): Result.Result<number, InvalidArgument> =>
  attempt(() => duration(field, ms, min))

/** Checks a unix time in ms: from 0 to `maxInstantMs` (`field` names it in the error). */
export const checkInstantMs = (field: string, ms: number): Result.Result<number, InvalidArgument> =>
  attempt(() => instant(field, ms))

const resolve = (type: unknown, o: EnqueueOptions, nowMs: number): ResolvedEnqueueOptions => {
  wellFormed("type", nonBlank("type", type, "task type"), "task type")
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key))
      invalid(key, `unknown enqueue option ${JSON.stringify(key)}; known options: ${[...knownOptions].join(", ")}`)
  }
  const queue = o.queue === undefined ? defaultQueue : queueName(o.queue)
  let maxRetry = defaultMaxRetry
  if (o.maxRetry !== undefined) {
    if (typeof o.maxRetry !== "number" || !Number.isInteger(o.maxRetry) || o.maxRetry < 0 || o.maxRetry > int32Max) {
      invalid("maxRetry", `maxRetry must be a whole number from 0 to ${int32Max}, got ${show(o.maxRetry)}`)
    }
    maxRetry = o.maxRetry
  }
  const timeoutMs = o.timeout === undefined ? 0 : duration("timeout", o.timeout)
  const deadlineMs = o.deadline === undefined ? 0 : instant("deadline", o.deadline)
  const deadlineSec = Math.floor(deadlineMs / 1000)
  let timeoutSec = Math.ceil(timeoutMs / 1000)
  if (timeoutSec === 0 && deadlineSec === 0) timeoutSec = defaultTimeoutSec
  const uniqueMs = o.unique === undefined ? undefined : duration("unique", o.unique, 1000)
  if (o.processAt !== undefined && o.processIn !== undefined) {
    invalid("processAt", "give either processAt or processIn, not both")
  }
  const dueMs =
    o.processAt !== undefined
      ? instant("processAt", o.processAt)
      : o.processIn !== undefined
        ? nowMs + duration("processIn", o.processIn)
        : nowMs
  const taskId =
    o.taskId === undefined ? undefined : wellFormed("taskId", nonBlank("taskId", o.taskId, "taskId"), "taskId")
  const retentionSec = o.retention === undefined ? 0 : Math.ceil(duration("retention", o.retention) / 1000)
  const group =
    o.group === undefined ? undefined : wellFormed("group", nonBlank("group", o.group, "group name"), "group name")
  let headers = o.headers === undefined ? {} : headersOf(o.headers)
  let limitKey: string | undefined
  if (o.limitKey !== undefined) {
    limitKey = wellFormed("limitKey", nonBlank("limitKey", o.limitKey, "limitKey"), "limitKey")
    if (limitKey.length > maxLimitKeyLength)
      invalid("limitKey", `limitKey is ${limitKey.length} characters long; at most ${maxLimitKeyLength} are allowed`)
    for (const field of ["processAt", "processIn", "group"] as const)
      if (o[field] !== undefined)
        invalid(field, `${field} cannot be combined with limitKey: a task with a limit key runs when its key has room`)
    headers = { ...headers, [limitKeyHeader]: limitKey }
  }
  return {
    queue,
    maxRetry,
    timeoutSec,
    deadlineSec,
    uniqueMs,
    processAtMs: dueMs > nowMs ? dueMs : undefined,
    taskId,
    retentionSec,
    group,
    headers,
    limitKey
  }
}

/**
 * Checks a task type and its options and applies asynq's defaults: queue "default", maxRetry 25,
 * timeout 30 min when neither timeout nor deadline is given (deadline alone: no timeout).
 * Stricter than asynq: a negative maxRetry is rejected (asynq treats it as 0), unknown option
 * names are rejected (a misspelt option would otherwise be silently ignored), durations and dates
 * are bounded (`maxDurationMs`, `maxInstantMs`) and strings with a lone surrogate are rejected.
 */
export const resolveEnqueueOptions = (
  type: string,
  options: EnqueueOptions | undefined,
  nowMs: number
): Result.Result<ResolvedEnqueueOptions, InvalidArgument> => {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return Result.fail(
      new InvalidArgument({ field: "options", message: `enqueue options must be an object, got ${show(options)}` })
    )
  }
  return attempt(() => resolve(type, options ?? {}, nowMs))
}
