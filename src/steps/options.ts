/**
 * Enqueue options: what a caller may ask for, checked before anything is written, with asynq's
 * defaults. Times are milliseconds or Dates here; asynq's message stores whole seconds.
 */
import { Result } from "effect"
import { InvalidArgument } from "../broker/errors.js"

export interface EnqueueOptions {
  /** Queue name. Default "default". */
  readonly queue?: string | undefined
  /** How many times a failed task is retried. Default 25. A whole number >= 0. */
  readonly maxRetry?: number | undefined
  /** How long one attempt may run, ms (stored as whole seconds, rounded up). 0 or absent: 30 min unless `deadline` is set. */
  readonly timeout?: number | undefined
  /** Time by which the task must finish (Date or unix ms). Alone, it means no per-attempt timeout. */
  readonly deadline?: Date | number | undefined
  /** Uniqueness TTL, ms (>= 1000): while the lock lives, a task with the same queue, type and payload is rejected with DuplicateTask. */
  readonly unique?: number | undefined
  /** Process at this time (Date or unix ms). In the past or now: enqueued as pending. */
  readonly processAt?: Date | number | undefined
  /** Process after this delay, ms. 0: enqueued as pending. */
  readonly processIn?: number | undefined
  /** Task id. Default: 13 random base62 characters (regenerated if taken). A custom id that a task in the queue already has gives TaskIdConflict. */
  readonly taskId?: string | undefined
  /** Keep the task this long after it completes, ms (stored as whole seconds, rounded up). Default 0: deleted on completion. */
  readonly retention?: number | undefined
  /** Aggregation group: the task waits in the group until the aggregator combines the group into one task. */
  readonly group?: string | undefined
  /** String headers carried with the task. */
  readonly headers?: Readonly<Record<string, string>> | undefined
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
}

export const defaultQueue = "default"
export const defaultMaxRetry = 25
export const defaultTimeoutSec = 30 * 60
export const maxQueueNameLength = 255
const int32Max = 2 ** 31 - 1

const knownOptions: ReadonlySet<string> = new Set([
  "queue", "maxRetry", "timeout", "deadline", "unique", "processAt", "processIn", "taskId", "retention", "group", "headers"
])

class Invalid {
  constructor(readonly error: InvalidArgument) {}
}
const invalid = (field: string, message: string): never => {
  throw new Invalid(new InvalidArgument({ field, message }))
}
const show = (v: unknown): string => (typeof v === "string" ? JSON.stringify(v) : v instanceof Date ? `Invalid Date` : String(v))

const nonBlank = (field: string, v: unknown, what: string): string => {
  if (typeof v !== "string" || v.trim() === "") invalid(field, `${what} must be a non-empty string (not only whitespace), got ${show(v)}`)
  return v as string
}

/** A queue name asynq accepts, and one whose keys stay in one Redis Cluster slot. */
const queueName = (v: unknown): string => {
  const q = nonBlank("queue", v, "queue name")
  if (q.length > maxQueueNameLength) invalid("queue", `queue name is ${q.length} characters long; at most ${maxQueueNameLength} are allowed`)
  if (/[{}]/.test(q)) invalid("queue", `queue name ${show(q)} contains '{' or '}', which would break the Redis Cluster hash tag of its keys`)
  return q
}

const duration = (field: string, v: unknown, min = 0): number => {
  if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
    invalid(field, `${field} must be a finite number of milliseconds >= ${min}, got ${show(v)}`)
  }
  return v as number
}

const instant = (field: string, v: unknown): number => {
  const ms = v instanceof Date ? v.getTime() : v
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    invalid(field, `${field} must be a valid Date or a unix time in milliseconds >= 0, got ${show(v)}`)
  }
  return ms as number
}

const headersOf = (v: unknown): Readonly<Record<string, string>> => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) invalid("headers", `headers must be an object of string values, got ${show(v)}`)
  for (const [k, x] of Object.entries(v as object)) {
    if (typeof x !== "string") invalid("headers", `header ${JSON.stringify(k)} must be a string, got ${typeof x}`)
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
 * Checks a queue name: not empty or only whitespace (as asynq), at most 255 characters, and no
 * '{' or '}' (stricter than asynq: they would split the queue's keys across Redis Cluster slots).
 */
export const checkQueueName = (queue: string): Result.Result<string, InvalidArgument> => attempt(() => queueName(queue))

const resolve = (type: unknown, o: EnqueueOptions, nowMs: number): ResolvedEnqueueOptions => {
  nonBlank("type", type, "task type")
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) invalid(key, `unknown enqueue option ${JSON.stringify(key)}; known options: ${[...knownOptions].join(", ")}`)
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
  const dueMs = o.processAt !== undefined ? instant("processAt", o.processAt) : o.processIn !== undefined ? nowMs + duration("processIn", o.processIn) : nowMs
  const taskId = o.taskId === undefined ? undefined : nonBlank("taskId", o.taskId, "taskId")
  const retentionSec = o.retention === undefined ? 0 : Math.ceil(duration("retention", o.retention) / 1000)
  const group = o.group === undefined ? undefined : nonBlank("group", o.group, "group name")
  const headers = o.headers === undefined ? {} : headersOf(o.headers)
  return {
    queue, maxRetry, timeoutSec, deadlineSec, uniqueMs,
    processAtMs: dueMs > nowMs ? dueMs : undefined,
    taskId, retentionSec, group, headers
  }
}

/**
 * Checks a task type and its options and applies asynq's defaults: queue "default", maxRetry 25,
 * timeout 30 min when neither timeout nor deadline is given (deadline alone: no timeout).
 * Stricter than asynq: a negative maxRetry is rejected (asynq treats it as 0), and unknown option
 * names are rejected (a misspelt option would otherwise be silently ignored).
 */
export const resolveEnqueueOptions = (
  type: string,
  options: EnqueueOptions | undefined,
  nowMs: number
): Result.Result<ResolvedEnqueueOptions, InvalidArgument> => {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return Result.fail(new InvalidArgument({ field: "options", message: `enqueue options must be an object, got ${show(options)}` }))
  }
  return attempt(() => resolve(type, options ?? {}, nowMs))
}
