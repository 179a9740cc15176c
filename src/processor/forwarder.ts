/**
 * Forwarding due scheduled and retry tasks to pending: the forward pass (what the Server's
 * forwarder and the maintenance tick run) and the Server's forwarder loop, which forwards until
 * none is left, wakes the local fetcher and publishes a wake-up for the queues that got tasks, then
 * sleeps until the earliest due time of its queues (read by the pass), at most
 * `delayedTaskCheckIntervalMs` (asynq's fixed period, 5 s by default): a task is moved on its
 * millisecond. A task written meanwhile that is due earlier than that wakes it up (its write
 * publishes on `forwardChannel`, see {@link makeForwardWake}).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { forward } from "../steps/forward.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import { logQueueFailures, paced, sleepUntilDueMs } from "./periodic.js"
import { makeSignal, type Signal } from "./Signal.js"
import { publishWake } from "./wake.js"

export interface ForwardPassOptions {
  readonly queues: ReadonlyArray<string>
  /** Most tasks moved per queue per call of the step (default 100). */
  readonly batch?: number
  /** "one": one call of the step (a tick's bounded work); "all": call again while a queue may have more due. */
  readonly rounds: "one" | "all"
  /** When given: raised, and a wake-up published for the queues that got tasks, once tasks were moved. */
  readonly wake?: Signal
}

/** What one forward pass did. */
export interface ForwardSummary {
  readonly moved: number
  readonly byQueue: Readonly<Record<string, number>>
  /** Queues that may still have due tasks (empty after `rounds: "all"`). */
  readonly more: ReadonlyArray<string>
  /** Queues that failed (in any round): the others were forwarded. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /**
   * The earliest due time (unix ms) of a task still scheduled or in retry in the queues forwarded,
   * read after the moves; undefined when there is none. A scheduled function can use it to run the
   * next tick when it comes (exact for tasks effect-asynq wrote; a whole second for Go's).
   */
  readonly nextDueAtMs: number | undefined
}

export const forwardPass = Effect.fn("Processor.forwardPass")(function* (options: ForwardPassOptions) {
  let pending = options.queues
  let moved = 0
  const byQueue: Record<string, number> = {}
  const nextDue: Record<string, number | undefined> = {}
  const failedQueues: Array<QueueFailure> = []
  for (;;) {
    const r = yield* forward({ queues: pending, ...(options.batch !== undefined ? { batch: options.batch } : {}) })
    moved += r.moved
    failedQueues.push(...r.failedQueues)
    for (const [q, n] of Object.entries(r.byQueue)) byQueue[q] = (byQueue[q] ?? 0) + n
    // The last read of each queue forwarded in this round.
    for (const q of Object.keys(r.byQueue)) nextDue[q] = r.nextDueMs[q]
    pending = r.more
    if (options.rounds === "one" || pending.length === 0) break
  }
  const touched = Object.keys(byQueue).filter((q) => byQueue[q]! > 0)
  if (options.wake && touched.length > 0) {
    options.wake.raise()
    yield* publishWake(touched)
  }
  const dues = Object.values(nextDue).filter((t): t is number => t !== undefined)
  const nextDueAtMs = dues.length === 0 ? undefined : Math.min(...dues)
  return { moved, byQueue, more: pending, failedQueues, nextDueAtMs } satisfies ForwardSummary as ForwardSummary
})

/** Settings of {@link forwardUntil}. */
export interface ForwardUntilOptions {
  readonly queues: ReadonlyArray<string>
  /** Most tasks moved per queue per call of the step (default 100). */
  readonly batch?: number
  /** Go on until this time (unix ms, on Effect's Clock). */
  readonly untilMs: number
  /** The longest sleep between two looks (a task written meanwhile, due earlier, is seen at the next look). */
  readonly intervalMs: number
  /** The earliest due time already known (from a pass that just ran), so the first sleep follows it. */
  readonly nextDueAtMs?: number | undefined
}

/**
 * Forwarding on time for a while, without pub/sub (what a maintenance tick that stays up does):
 * sleeps until the earliest due time of its queues (at most `intervalMs`, never past `untilMs`),
 * forwards what is due, and so on until `untilMs`. Returns what all its passes did together.
 */
export const forwardUntil = Effect.fn("Processor.forwardUntil")(function* (options: ForwardUntilOptions) {
  let total: ForwardSummary = {
    moved: 0,
    byQueue: {},
    more: [],
    failedQueues: [],
    nextDueAtMs: options.nextDueAtMs
  }
  for (;;) {
    const nowMs = yield* Clock.currentTimeMillis
    if (nowMs >= options.untilMs) break
    const sleepMs =
      total.more.length > 0
        ? 0
        : sleepUntilDueMs({
            dueAtMs: total.nextDueAtMs,
            nowMs,
            intervalMs: options.intervalMs,
            floorMs: forwarderFloorMs
          })
    const wakeAtMs = Math.min(nowMs + sleepMs, options.untilMs)
    if (wakeAtMs > nowMs) yield* Effect.sleep(Duration.millis(wakeAtMs - nowMs))
    const r = yield* forwardPass({
      queues: options.queues,
      rounds: "one",
      ...(options.batch !== undefined ? { batch: options.batch } : {})
    })
    total = forwardedThen(total, r)
  }
  return total
})

/** Two forward summaries as one: the counts added up, what may be left and the next due time from the later. */
export const forwardedThen = (earlier: ForwardSummary, later: ForwardSummary): ForwardSummary => {
  const byQueue: Record<string, number> = { ...earlier.byQueue }
  for (const [q, n] of Object.entries(later.byQueue)) byQueue[q] = (byQueue[q] ?? 0) + n
  return {
    moved: earlier.moved + later.moved,
    byQueue,
    more: later.more,
    failedQueues: [...earlier.failedQueues, ...later.failedQueues],
    nextDueAtMs: later.nextDueAtMs
  }
}

/**
 * The forwarder's wake-ups from other processes: `announce(dueMs)` (a task due then was written to
 * one of its queues, heard on `forwardChannel`) raises `signal` when that is earlier than the time
 * the forwarder plans to look next, or while a pass runs (the pass may have read that queue before
 * the write). A task behind the plan costs nothing.
 */
export interface ForwardWake {
  readonly signal: Signal
  readonly announce: (dueMs: number) => void
  /** The loop says when it will look next (unix ms), or `Infinity` while a pass runs. */
  readonly plan: (atMs: number) => void
}

export const makeForwardWake = (): ForwardWake => {
  const signal = makeSignal()
  let plannedAtMs = Number.POSITIVE_INFINITY
  return {
    signal,
    announce: (dueMs) => {
      if (dueMs < plannedAtMs) signal.raise()
    },
    plan: (atMs) => {
      plannedAtMs = atMs
    }
  }
}

/** The forwarder never sleeps less than this between passes (a due time that another process keeps from moving does not make it spin). */
export const forwarderFloorMs = 1

/** Most ids one script call of the Server's forwarder takes per queue (a burst due at once moves in few round trips). */
export const forwarderBatch = 1000

/**
 * The Server's forwarder: a pass (forwarding each queue until nothing due is left), then a sleep
 * until the earliest due time the pass read, at most `intervalMs`, cut short by `forwardWake`
 * (after a failed pass: `intervalMs`, cut short by any announcement).
 */
export const forwarderLoop = (
  queues: ReadonlyArray<string>,
  wake: Signal,
  intervalMs: number,
  forwardWake: ForwardWake = makeForwardWake()
) =>
  paced(
    "forwarder",
    intervalMs,
    Effect.sync(() => forwardWake.plan(Number.POSITIVE_INFINITY)).pipe(
      Effect.andThen(forwardPass({ queues, rounds: "all", wake, batch: forwarderBatch })),
      Effect.tap((r) => logQueueFailures("forwarding", r.failedQueues)),
      Effect.flatMap((r) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) => {
          const sleepMs = sleepUntilDueMs({ dueAtMs: r.nextDueAtMs, nowMs, intervalMs, floorMs: forwarderFloorMs })
          forwardWake.plan(nowMs + sleepMs)
          return sleepMs
        })
      )
    ),
    forwardWake.signal
  )
