import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { Broker } from "../../src/broker/Broker.js"
import { archive } from "../../src/steps/archive.js"
import { complete } from "../../src/steps/complete.js"
import { dequeueLease, type LeasedTask } from "../../src/steps/dequeueLease.js"
import { extendLease } from "../../src/steps/extendLease.js"
import { requeue } from "../../src/steps/requeue.js"
import { retry } from "../../src/steps/retry.js"
import { defaultRetryDelayMs } from "../../src/steps/retryDelay.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"

/** Runs one task: succeed = done, fail/die = a failed attempt (retry or archive). */
export type TaskHandler = (msg: TaskMessage) => Effect.Effect<unknown, unknown, never>

export interface DrainConfig {
  /** Queues to take tasks from, in priority order. */
  readonly queues: ReadonlyArray<string>
  readonly handler: TaskHandler
  /** Tasks run at the same time (default 1). */
  readonly concurrency?: number
  /** Stop taking tasks when less than this is left before the deadline (default 10 000 ms). */
  readonly safetyMarginMs?: number
  /** Lease taken on each task, extended while it runs (default 30 000 ms). */
  readonly leaseMs?: number
  /** Retry delay after a failure (default asynq's). */
  readonly retryDelayMs?: (retried: number, error: unknown, msg: TaskMessage) => number
}

/** What one drain did. */
export interface DrainSummary {
  readonly succeeded: number
  /** Failed attempts sent to retry. */
  readonly retried: number
  /** Failed attempts with no retry left (or SkipRetry), archived. */
  readonly archived: number
  /** Tasks given back unfinished because the invocation's time ran out. */
  readonly requeued: number
  /** Tasks whose lease was lost while running (recovered elsewhere): nothing was written for them. */
  readonly leaseLost: number
  /** Corrupt messages dequeue set aside. */
  readonly corrupt: number
  /** Why the drain ended: no task left, or the safety margin was reached. */
  readonly stoppedBecause: "empty" | "deadline"
  /** Milliseconds left before the deadline when the drain returned. */
  readonly remainingMs: number
}

const errorText = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

const hasTag = (e: unknown, tag: string) => typeof e === "object" && e !== null && "_tag" in e && (e as { _tag: unknown })._tag === tag
const isSkipRetry = (e: unknown) => hasTag(e, "SkipRetry")

/** When a task's own time is up (asynq: timeout from dequeue, or its deadline), unix ms; Infinity if none. */
const taskDeadlineMs = (msg: TaskMessage, startMs: number) =>
  Math.min(msg.timeout > 0 ? startMs + msg.timeout * 1000 : Infinity, msg.deadline > 0 ? msg.deadline * 1000 : Infinity)

/**
 * Processes tasks until the queues are empty or less than `safetyMarginMs` is left before
 * `deadlineMs` (a time on Effect's Clock). Then it takes no more; tasks still running get until
 * half the margin is left, after which they are interrupted and requeued, so the drain returns
 * before its deadline with a summary. If the function is killed anyway, the leases expire and
 * `recover` returns its tasks.
 */
export const drain = Effect.fn("Adapters.drain")(function* (config: DrainConfig, deadlineMs: number) {
  const margin = config.safetyMarginMs ?? 10_000
  const leaseMs = config.leaseMs ?? 30_000
  const hardStopMs = deadlineMs - margin / 2
  const counts = { succeeded: 0, retried: 0, archived: 0, requeued: 0, leaseLost: 0, corrupt: 0 }
  let stoppedBecause: "empty" | "deadline" = "empty"

  const settle = <E>(e: Effect.Effect<unknown, E, Broker>, key: keyof typeof counts) =>
    e.pipe(
      Effect.map(() => void counts[key]++),
      Effect.catch((err: E) => (hasTag(err, "LeaseLost") ? Effect.sync(() => void counts.leaseLost++) : Effect.fail(err)))
    )

  const fail = Effect.fnUntraced(function* (msg: TaskMessage, error: unknown) {
    const errorMsg = errorText(error)
    if (msg.retried >= msg.retry || isSkipRetry(error)) return yield* settle(archive(msg, { errorMsg }), "archived")
    const delay = config.retryDelayMs ? config.retryDelayMs(msg.retried, error, msg) : yield* defaultRetryDelayMs(msg.retried)
    const now = yield* Clock.currentTimeMillis
    yield* settle(retry(msg, { retryAtMs: now + delay, errorMsg, isFailure: true }), "retried")
  })

  const keepLease = (msg: TaskMessage) =>
    Effect.sleep(Duration.millis(leaseMs / 3)).pipe(
      Effect.andThen(extendLease({ queue: msg.queue, ids: [msg.id], leaseMs })),
      Effect.ignore,
      Effect.forever
    )

  const runOne = Effect.fnUntraced(function* ({ msg }: LeasedTask) {
    const start = yield* Clock.currentTimeMillis
    const ownDeadline = taskDeadlineMs(msg, start)
    const budget = Math.max(0, Math.min(ownDeadline, hardStopMs) - start)
    const outcome = yield* Effect.raceFirst(
      config.handler(msg).pipe(Effect.exit, Effect.timeoutOption(Duration.millis(budget))),
      keepLease(msg)
    )
    if (Option.isNone(outcome)) {
      // Out of time: the task's own timeout is a failed attempt; the invocation's is not the task's fault.
      if (ownDeadline <= hardStopMs) return yield* fail(msg, new Error("context deadline exceeded"))
      return yield* settle(requeue(msg), "requeued")
    }
    const exit = outcome.value
    if (Exit.isSuccess(exit)) return yield* settle(complete(msg), "succeeded")
    yield* fail(msg, Cause.squash(exit.cause))
  })

  const worker = Effect.gen(function* () {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      if (deadlineMs - now < margin) {
        stoppedBecause = "deadline"
        return
      }
      const { tasks, corrupt } = yield* dequeueLease({ queues: config.queues, count: 1, leaseMs })
      counts.corrupt += corrupt.length
      const task = tasks[0]
      if (!task) return
      yield* runOne(task)
    }
  })

  const n = Math.max(1, Math.floor(config.concurrency ?? 1))
  yield* Effect.forEach(Array.from({ length: n }), () => worker, { concurrency: "unbounded", discard: true })
  const end = yield* Clock.currentTimeMillis
  const summary: DrainSummary = { ...counts, stoppedBecause, remainingMs: deadlineMs - end }
  return summary
})
