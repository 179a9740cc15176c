/**
 * Writing a finished attempt's outcome to Redis: complete, retry, archive, drop (RevokeTask),
 * requeue, or give back a task a drain skipped. A write that fails on a Redis error is tried again with jittered backoff for as long as
 * we still hold the lease (asynq's syncer), so a blip in the connection loses nothing; after the
 * lease ran out the recoverer takes the task back. LeaseLost means someone else already did.
 *
 * A lost reply (the write ran, its reply did not arrive; ioredis resends the EVALSHA after the
 * reconnect, or the call fails and is sent again here) is not taken for a lost lease: complete,
 * retry and archive answer "already done" when they find their own earlier effect (the same message
 * in the retry set or the archive; the task completed or gone), and nothing is written or counted
 * twice. Retry and archive read the failure's time once, so every send carries the same message.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { Broker } from "../broker/Broker.js"
import type { LeaseLost } from "../broker/errors.js"
import { holdQueueScript } from "../broker/holdQueue.js"
import { runScript } from "../broker/script.js"
import { RedisError } from "../redis/errors.js"
import { archive } from "../steps/archive.js"
import { complete } from "../steps/complete.js"
import { requeue } from "../steps/requeue.js"
import { retry } from "../steps/retry.js"
import { defaultRetryDelayMs } from "../steps/retryDelay.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { errorText, HandlerNotFound, isRevokeTask, isSkipRetry, type RateLimited, rateLimitedIn } from "./errors.js"
import { warnMissingHandler } from "./missingHandler.js"
import type { Acker } from "./acker.js"
import type { ResolvedOptions } from "./options.js"
import type { ActiveTask } from "./registry.js"
import { replayFirst } from "./replayFirst.js"
import type { Task } from "./Task.js"

/**
 * What happened to the task in Redis. "skipped": a drain did not run it (it could not finish before
 * the drain's end) and gave it back to the retry set, not counted as a failure. "rate-limited": its
 * handler returned `RateLimited`; it went back to the retry set, not counted as a failure.
 */
export type Settled =
  | "completed"
  | "retried"
  | "archived"
  | "revoked"
  | "requeued"
  | "skipped"
  | "rate-limited"
  | "lease-lost"
  | "gave-up"

const backoff = Schedule.min([Schedule.exponential(Duration.millis(50), 2), Schedule.spaced(Duration.seconds(2))]).pipe(
  Schedule.jittered
)

/** Until when a failed write is tried again: while the lease holds, and not past the entry's settleByMs. */
const writeUntilMs = (entry: ActiveTask) =>
  entry.settleByMs === undefined ? entry.leaseExpiresAtMs : Math.min(entry.leaseExpiresAtMs, entry.settleByMs)

/** Gives up a write still unanswered at `settleByMs` (a Redis that hangs rather than errors). */
const boundedBy =
  (entry: ActiveTask) =>
  <A, E, R>(eff: Effect.Effect<A, E, R>): Effect.Effect<A, E | RedisError, R> => {
    const settleByMs = entry.settleByMs
    if (settleByMs === undefined) return eff
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.timeoutOrElse(eff, {
        duration: Duration.millis(Math.max(0, settleByMs - now)),
        orElse: () =>
          Effect.fail(new RedisError({ op: "settle", message: "no answer from Redis before the drain's end" }))
      })
    )
  }

/** Tells the fetch loop (once) that the task's outcome write failed (on a Cluster it gives the task's slot back). */
const writeFailed = (entry: ActiveTask) => {
  const tell = entry.onWriteFailed
  if (tell === undefined) return
  entry.onWriteFailed = undefined
  tell()
}

/** Runs a write, retrying Redis errors while the lease still holds. */
const write = (
  entry: ActiveTask,
  what: string,
  eff: Effect.Effect<unknown, LeaseLost | RedisError, Broker>,
  done: Settled
) =>
  eff.pipe(
    Effect.tapError((e) =>
      e._tag === "RedisError"
        ? Effect.andThen(
            Effect.sync(() => writeFailed(entry)),
            Effect.logWarning(`${what} of task ${entry.msg.id} failed, trying again: ${e.message}`)
          )
        : Effect.void
    ),
    Effect.retry({
      schedule: backoff,
      while: (e) =>
        e._tag === "RedisError" ? Effect.map(Clock.currentTimeMillis, (now) => now < writeUntilMs(entry)) : false
    }),
    boundedBy(entry),
    Effect.as(done),
    Effect.catch((e) =>
      e._tag === "LeaseLost"
        ? Effect.logWarning(`task ${entry.msg.id}: ${what} skipped, the task is no longer ours (${e.message})`).pipe(
            Effect.as<Settled>("lease-lost")
          )
        : Effect.logError(
            `task ${entry.msg.id}: ${what} failed and our lease ran out (or the drain's time did); the recoverer will take the task back: ${e.message}`
          ).pipe(Effect.as<Settled>("gave-up"))
    )
  )

/** The log annotations of a task's attempt (the handler's logs and the outcome's warnings carry them). */
export const taskAnnotations = (msg: TaskMessage) => ({ task: msg.id, type: msg.type, queue: msg.queue })

/** Runs `eff` with the task's log annotations. */
export const annotateTask = <A, E, R>(msg: TaskMessage, eff: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.annotateLogs(eff, taskAnnotations(msg))

const completedOutcome: Effect.Effect<Settled> = Effect.succeed("completed")

/**
 * Completes a task that succeeded, in a round trip shared with the tasks finishing at the same time.
 * The first try runs bare (no retry schedule or handlers built for the common case, a success); a
 * failed first try goes on exactly as `write` does (logged, retried while the lease holds, …).
 */
export const settleSuccess = (entry: ActiveTask, acker: Acker): Effect.Effect<Settled, never, Broker> => {
  const complete = acker.complete(entry.msg)
  if (entry.settleByMs !== undefined) return annotateTask(entry.msg, write(entry, "complete", complete, "completed"))
  return Effect.matchEffect(complete, {
    onSuccess: () => completedOutcome,
    onFailure: (first) => annotateTask(entry.msg, write(entry, "complete", replayFirst(first, complete), "completed"))
  })
}

export const settleRequeue = (entry: ActiveTask) =>
  Effect.flatMap(Clock.currentTimeMillis, (atMs) => write(entry, "requeue", requeue(entry.msg, atMs), "requeued"))

/** The error message a task a drain skipped records (it is not a failure: `retried` is unchanged). */
export const skippedMessage =
  "skipped by a time-boxed drain: the task's timeout or deadline ends after the function's deadline"

/**
 * Gives back a task a drain did not run: to the retry set, due at `dueAtMs` (the drain's deadline, so
 * this drain never takes it again), not counted (asynq's retry with isFailure false: `retried` and the
 * failed counters unchanged; `error_msg` says why). Once due, forward puts it at the back of pending,
 * behind the tasks that have not had a turn.
 */
export const settleSkipped = (entry: ActiveTask, dueAtMs: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (atMs) =>
    write(
      entry,
      "give back",
      retry(entry.msg, { retryAtMs: dueAtMs, errorMsg: skippedMessage, isFailure: false, atMs }),
      "skipped"
    )
  )

const retryDelayMs = (options: ResolvedOptions, msg: TaskMessage, error: unknown, task: Task) => {
  if (!options.retryDelay) return defaultRetryDelayMs(msg.retried)
  return Effect.suspend(() => {
    const d = options.retryDelay!(msg.retried, error, task)
    return Number.isFinite(d) && d >= 0
      ? Effect.succeed(d)
      : Effect.logWarning(`retryDelay returned ${d} for task ${msg.id}; using the default delay`).pipe(
          Effect.andThen(defaultRetryDelayMs(msg.retried))
        )
  })
}

/**
 * A handler's `RateLimited`: the task goes to the retry set, due after its `retryAfter`, not counted
 * (asynq's retry with isFailure false: `retried` and the failed counters unchanged, `error_msg` says
 * why; no error handler, never archived for it). A `retryAfter` that is not a duration >= 0 uses the
 * default retry delay of the task's attempt (logged). With `holdQueue`, the queue is held until the
 * same time first (lua/holdQueue.lua: no worker leases its tasks before then); a hold that cannot
 * be written is logged and the task still goes back.
 */
const settleRateLimited = (entry: ActiveTask, limited: RateLimited, errorMsg: string) =>
  Effect.gen(function* () {
    const msg = entry.msg
    const atMs = yield* Clock.currentTimeMillis
    const asked = limited.retryAfterMs
    const delay =
      Number.isFinite(asked) && asked >= 0
        ? asked
        : yield* Effect.logWarning(
            `task ${msg.id}: RateLimited with retryAfter ${asked} ms; using the default delay`
          ).pipe(Effect.andThen(defaultRetryDelayMs(msg.retried)))
    yield* Effect.logDebug(
      `task ${msg.id} (${msg.type}) rate limited, back in ${delay} ms (no retry used)${limited.holdQueue ? `, queue ${msg.queue} held as long` : ""}: ${errorMsg}`
    )
    if (limited.holdQueue && delay > 0) {
      yield* runScript(holdQueueScript, { queue: msg.queue, untilMs: atMs + delay }).pipe(
        Effect.retry({ schedule: backoff, times: 3 }),
        boundedBy(entry),
        Effect.catch((e) =>
          Effect.logWarning(
            `task ${msg.id}: could not hold queue ${msg.queue} (the task still goes back): ${e.message}`
          )
        )
      )
    }
    return yield* write(
      entry,
      "rate-limited give back",
      retry(msg, { retryAtMs: atMs + delay, errorMsg, isFailure: false, atMs }),
      "rate-limited"
    )
  })

/**
 * asynq's handleFailedMessage: error handler, then RevokeTask → drop, no retries left or SkipRetry →
 * archive, else retry. A stop at a drain's hard stop (TaskStopped "function-deadline") is always a
 * counted failure, whatever `isFailure` says.
 */
export const settleFailure = Effect.fnUntraced(function* (
  options: ResolvedOptions,
  entry: ActiveTask,
  task: Task,
  error: unknown,
  /** The attempt counts whatever `isFailure` says (a drain's hard stop: else a task too long for any invocation would retry forever). */
  alwaysCounts = false
) {
  const msg = entry.msg
  const errorMsg = errorText(error)
  const limited = alwaysCounts ? undefined : rateLimitedIn(error)
  if (limited) return yield* settleRateLimited(entry, limited, errorMsg)
  if (options.errorHandler) {
    const eh = options.errorHandler
    yield* Effect.tryPromise({ try: async () => eh(task, error), catch: (e) => e }).pipe(
      Effect.catch((e) => Effect.logWarning(`errorHandler threw for task ${msg.id}: ${errorText(e)}`))
    )
  }
  if (isRevokeTask(error)) {
    yield* Effect.logWarning(`task ${msg.id} revoked: ${errorMsg}`)
    return yield* write(entry, "revoke", complete({ ...msg, retention: 0 }), "revoked")
  }
  // The failure's time is read once: a write sent again (after a Redis error) carries the same
  // message, so the script recognises its own move if the first send ran and only its reply was lost.
  const atMs = yield* Clock.currentTimeMillis
  if (msg.retried >= msg.retry || isSkipRetry(error)) {
    yield* Effect.logWarning(`task ${msg.id} (${msg.type}) archived after ${msg.retried} retries: ${errorMsg}`)
    return yield* write(entry, "archive", archive(msg, { errorMsg, atMs }), "archived")
  }
  const isFailure =
    alwaysCounts ||
    (() => {
      try {
        return options.isFailure(error)
      } catch {
        return true
      }
    })()
  const delay = yield* retryDelayMs(options, msg, error, task)
  yield* Effect.logDebug(`task ${msg.id} (${msg.type}) failed, retry in ${delay} ms: ${errorMsg}`)
  if (error instanceof HandlerNotFound) {
    yield* warnMissingHandler(
      msg,
      `go to retry (this one in ${delay} ms, attempt ${msg.retried + 1} of ${msg.retry + 1}; archived once its retries are used up)`
    )
  }
  return yield* write(entry, "retry", retry(msg, { retryAtMs: atMs + delay, errorMsg, isFailure, atMs }), "retried")
})
