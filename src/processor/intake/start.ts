/**
 * The intake's last step: a leased task becomes a running attempt. Each freshly leased task is
 * registered (from then on it holds a slot and the heartbeat keeps its lease) and its attempt
 * starts at once in a fiber of the attempts set (it runs up to its first wait), whichever source
 * leased it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import type { Broker } from "../../broker/Broker.js"
import type { DequeueLeaseResult, LeasedTask } from "../../steps/dequeueLease.js"
import { logQueueFailures } from "../periodic.js"
import type { ActiveTask } from "../registry.js"
import { makeActiveTask, runAttempt, type RunDeps } from "../runAttempt.js"
import type { Settled } from "../settle.js"
import type { Signal } from "../Signal.js"

/** What starting leased tasks needs: what an attempt runs with, and the set its fiber goes into. */
export interface StartDeps<R> extends RunDeps<R> {
  /** The attempts running now (their fibers end with the scope that made the set). */
  readonly attempts: FiberSet.FiberSet<Settled, never>
  /** Raised when an attempt ends (a slot is free). */
  readonly slotFreed?: Signal | undefined
  /**
   * Adjusts each freshly leased task before it is registered and started (a drain bounds the
   * outcome write by its own end and, once past its hard stop, has the task stopped at once).
   */
  readonly prepare?: ((task: ActiveTask) => void) | undefined
}

/**
 * Registers a freshly leased task and returns its attempt, to run in a fiber of `deps.attempts`
 * (with the observer's span, `onSettled`, and the slot-freed signal when it ends).
 */
export const registerAttempt = <R>(
  deps: StartDeps<R>,
  leased: LeasedTask,
  now: number
): Effect.Effect<Settled, never, R | Broker> => {
  const task = makeActiveTask(leased.msg, now, leased.leaseExpiresAtMs)
  deps.prepare?.(task)
  deps.registry.add(task)
  const observer = deps.options.observer
  const run = observer ? observer.attempt(task, runAttempt(deps, task)) : runAttempt(deps, task)
  const onSettled = deps.options.onSettled
  const attempt = onSettled
    ? run.pipe(
        Effect.tap((outcome) =>
          Effect.try(() => onSettled(task.msg, outcome)).pipe(
            Effect.catch((e) => Effect.logWarning(`onSettled threw: ${String(e)}`))
          )
        )
      )
    : run
  const slotFreed = deps.slotFreed
  return slotFreed
    ? Effect.ensuring(
        attempt,
        Effect.sync(() => slotFreed.raise())
      )
    : attempt
}

/**
 * Registers and starts freshly leased tasks (each attempt in its own fiber, started at once: it runs
 * up to its first wait), and reports the corrupt ones set aside and the queues that failed.
 */
export const startLeased = <R>(
  deps: StartDeps<R>,
  got: DequeueLeaseResult
): Effect.Effect<Array<Fiber.Fiber<Settled>>, never, R | Broker> => {
  const start = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    deps.options.observer?.fetched(got.tasks.length)
    const startOne = (leased: LeasedTask) =>
      FiberSet.run(deps.attempts, registerAttempt(deps, leased, now), { startImmediately: true })
    // One task (a hand-over, a fetch at low load) without forEach's machinery.
    return got.tasks.length === 1
      ? Effect.map(startOne(got.tasks[0]!), (f) => [f])
      : Effect.forEach(got.tasks, startOne)
  })
  // The common case, nothing corrupt and no queue failed, logs nothing.
  if (got.corrupt.length === 0 && got.failedQueues.length === 0) return start
  return Effect.andThen(
    Effect.andThen(
      Effect.forEach(
        got.corrupt,
        (c) => Effect.logError(`task ${c.id} in queue "${c.queue}" ${c.outcome}: ${c.error}`),
        { discard: true }
      ),
      logQueueFailures("taking tasks", got.failedQueues)
    ),
    start
  )
}
