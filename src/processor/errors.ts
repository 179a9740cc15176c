/**
 * Errors a handler returns to steer what happens to its task (asynq's SkipRetry and RevokeTask),
 * and the errors the processor records when it stops a handler itself.
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** Return (or throw) from a handler: archive the task now, no more retries. Wrapping it (as `cause`) works too. */
export class SkipRetry extends Data.TaggedError("SkipRetry")<{ readonly message: string }> {
  constructor(message = "skip retry for the task") {
    super({ message })
  }
}

/** Return (or throw) from a handler: drop the task, neither retried nor archived (asynq's RevokeTask). */
export class RevokeTask extends Data.TaggedError("RevokeTask")<{ readonly message: string }> {
  constructor(message = "revoke task") {
    super({ message })
  }
}

/**
 * Return (or throw) from a handler when the task cannot run now because of a rate limit (a remote
 * API answered 429, say): the task goes back to the queue, due `retryAfter` from now (a number is
 * milliseconds; `"30 seconds"` or a Duration work too), **without using up a retry**: it is not a
 * failure (the retried count, the failed counters and the error handler are left alone), and it is
 * never archived for it. Wrapping it (as `cause`) works too.
 *
 * With `holdQueue: true` the whole queue slows down too: no effect-asynq worker leases a task of
 * the task's queue for `retryAfter` (a hold stored with the queue in Redis, seen by every worker
 * at its next lease; the workers sleep until it ends, as for a queue's rate limit).
 *
 * ```ts
 * import { RateLimited } from "effect-asynq/worker"
 *
 * const handler = async () => {
 *   const res = await fetch("https://api.example.com/send", { method: "POST" })
 *   if (res.status === 429) throw new RateLimited({ retryAfter: Number(res.headers.get("retry-after") ?? "1") * 1000 })
 * }
 * ```
 */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly retryAfterMs: number
  /** Whether the whole queue is held for `retryAfterMs` too (not only this task). */
  readonly holdQueue: boolean
  readonly message: string
}> {
  constructor(options: RateLimitedOptions) {
    const ms = Option.match(Duration.fromInput(options.retryAfter), {
      onNone: () => NaN,
      onSome: (d) => Duration.toMillis(d)
    })
    super({
      retryAfterMs: ms,
      holdQueue: options.holdQueue === true,
      message: options.message ?? `rate limited: retry after ${ms} ms`
    })
  }
}

/** What `new RateLimited(...)` takes. */
export interface RateLimitedOptions {
  /** How long until the task may run again: milliseconds, a text such as `"30 seconds"`, or a Duration. */
  readonly retryAfter: Duration.Input
  /**
   * Also hold the whole queue for `retryAfter`: no effect-asynq worker leases any task of the
   * task's queue until then (default false: only this task goes back).
   */
  readonly holdQueue?: boolean
  /** The task's recorded error (default: "rate limited: retry after <ms> ms"). */
  readonly message?: string
}

/** No handler pattern matches the task's type (the mux's not-found handler). */
export class HandlerNotFound extends Data.TaggedError("HandlerNotFound")<{
  readonly type: string
  readonly message: string
}> {}

/** The task ran past its timeout or deadline (asynq records "context deadline exceeded"). */
export class TaskDeadlineExceeded extends Data.TaggedError("TaskDeadlineExceeded")<{ readonly message: string }> {}

/** The task was canceled through `asynq:cancel` (asynq records "context canceled"). */
export class TaskCanceled extends Data.TaggedError("TaskCanceled")<{ readonly message: string }> {}

/**
 * The processor stopped the handler: the task's lease was lost (recovered elsewhere), the server
 * shuts down, or a time-boxed drain reached its hard stop ("function-deadline"). The reason its
 * AbortSignal fires with; for "function-deadline" also the error the failed attempt records.
 */
export class TaskStopped extends Data.TaggedError("TaskStopped")<{
  readonly reason: "lease-lost" | "shutdown" | "function-deadline"
  readonly message: string
}> {}

/** The error message a task stopped at a drain's hard stop records (`error_msg`). */
export const functionDeadlineMessage = "function deadline reached before the task finished"

const tagOf = (e: unknown): unknown =>
  typeof e === "object" && e !== null && "_tag" in e ? (e as { _tag: unknown })._tag : undefined

/** Whether `e`, or an error in its `cause` chain, has the given tag. */
export const hasTagInChain = (e: unknown, tag: string): boolean => {
  let cur: unknown = e
  for (let depth = 0; depth < 16 && cur !== undefined && cur !== null; depth++) {
    if (tagOf(cur) === tag) return true
    cur = typeof cur === "object" && "cause" in cur ? (cur as { cause: unknown }).cause : undefined
  }
  return false
}

/** Whether an error (or one in its `cause` chain) is a `SkipRetry`: the task is archived at once. */
export const isSkipRetry = (e: unknown): boolean => hasTagInChain(e, "SkipRetry")
/** Whether an error (or one in its `cause` chain) is a `RevokeTask`: the task is dropped. */
export const isRevokeTask = (e: unknown): boolean => hasTagInChain(e, "RevokeTask")

/** The `RateLimited` error in `e`'s `cause` chain, if there is one (the task goes back without using a retry). */
export const rateLimitedIn = (e: unknown): RateLimited | undefined => {
  let cur: unknown = e
  for (let depth = 0; depth < 16 && cur !== undefined && cur !== null; depth++) {
    if (cur instanceof RateLimited) return cur
    cur = typeof cur === "object" && "cause" in cur ? (cur as { cause: unknown }).cause : undefined
  }
  return undefined
}

/** The text recorded as a task's `error_msg` for whatever a handler failed with. */
export const errorText = (e: unknown): string => {
  if (e instanceof Error) return e.message || e.name
  if (typeof e === "string") return e
  if (
    typeof e === "object" &&
    e !== null &&
    "message" in e &&
    typeof (e as { message: unknown }).message === "string"
  ) {
    return (e as { message: string }).message
  }
  try {
    const json = JSON.stringify(e)
    if (json !== undefined) return json
  } catch {
    // fall through
  }
  return String(e)
}
