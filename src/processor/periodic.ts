/**
 * How the Server's background jobs run and report: now and then every `intervalMs` (or, paced,
 * after as long as each run asks for), a failed run logged and the loop going on; the queues a run
 * could not serve logged one by one.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { QueueFailure } from "../steps/queueFailures.js"
import type { Signal } from "./Signal.js"

export const periodic = <E extends { readonly message?: string }, R>(
  name: string,
  intervalMs: number,
  run: Effect.Effect<unknown, E, R>
) =>
  run.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`${name} failed`, cause)),
    Effect.andThen(Effect.sleep(Duration.millis(intervalMs))),
    Effect.forever
  )

/**
 * Like `periodic`, but each run returns how long to sleep before the next one (milliseconds, on
 * Effect's Clock); after a failed run, logged, the loop sleeps `afterFailureMs`. With `wakeEarly`,
 * a raise of that signal (during a run, or while sleeping) cuts the sleep short.
 */
export const paced = <E extends { readonly message?: string }, R>(
  name: string,
  afterFailureMs: number,
  run: Effect.Effect<number, E, R>,
  wakeEarly?: Signal
) =>
  run.pipe(
    Effect.catchCause((cause) => Effect.as(Effect.logWarning(`${name} failed`, cause), afterFailureMs)),
    Effect.flatMap((sleepMs) =>
      wakeEarly ? Effect.asVoid(wakeEarly.wait(sleepMs)) : Effect.sleep(Duration.millis(sleepMs))
    ),
    Effect.forever
  )

/**
 * How long a paced job sleeps until the earliest time it has work (`dueAtMs`, on the same clock as
 * `nowMs`): at most `intervalMs` (work that appears meanwhile is seen within that), at least
 * `floorMs` (or the interval, when that is shorter); the interval when nothing is due.
 */
export const sleepUntilDueMs = (args: {
  readonly dueAtMs: number | undefined
  readonly nowMs: number
  readonly intervalMs: number
  readonly floorMs: number
}): number => {
  const { dueAtMs, nowMs, intervalMs, floorMs } = args
  if (dueAtMs === undefined) return intervalMs
  return Math.min(intervalMs, Math.max(floorMs, dueAtMs - nowMs))
}

/** Logs the queues a pass could not serve (the pass went on with the others), one warning each. */
export const logQueueFailures = (what: string, failed: ReadonlyArray<QueueFailure>) =>
  Effect.forEach(
    failed,
    (f) => Effect.logWarning(`${what} failed for queue "${f.queue}" (the other queues went on): ${f.error}`),
    { discard: true }
  )
