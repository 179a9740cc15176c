/**
 * The time-boxed drain, for functions (Lambda, Cloud Functions): takes tasks with the Server's
 * fetch pass (lease, register, run an attempt) and runs them with the processor's own parts — the
 * same handlers (a function, a record of patterns, or a ServeMux), TaskContext and AbortSignal,
 * per-task timeout/deadline, SkipRetry/RevokeTask, retryDelay, isFailure and errorHandler, lease
 * heartbeat, batched acknowledgements — until the queues are empty or the invocation's time runs
 * short. No forwarder, recoverer or server state: the
 * maintenance tick does that work in a serverless deployment.
 *
 * Long tasks (issue 16): a task still running at the drain's hard stop is stopped and counts as a
 * failed attempt (`retried + 1`, error "function deadline reached before the task finished"), so it
 * is retried after its backoff, behind the tasks that have not had a turn, and archived when its
 * retries are used up; it never blocks the head of the queue. With `longTasks: "skip"` a task whose
 * own timeout/deadline ends after the hard stop is not started at all (given back, not counted).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import { Broker } from "../broker/Broker.js"
import { makeObserver } from "./workerObserver.js"
import { InvalidArgument } from "../broker/errors.js"
import { makeDeadlines } from "./deadlines.js"
import { flowDrainWaitMs } from "./flowWait.js"
import { forwardDueOnEmpty } from "./forwardDue.js"
import { type Intake, type IntakeDeps, makeIntake } from "./intake/intake.js"
import { heartbeatLoop } from "./heartbeat.js"
import { handlerOf, type HandlerInput } from "./Mux.js"
import { resolveOptions, type ServerOptions } from "./options.js"
import { type ActiveTask, makeRegistry } from "./registry.js"
import type { Settled } from "./settle.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import type { Observer } from "./observer.js"

/** Settings of a drain: the queues (highest priority first), handlers, concurrency, safety margin, what to do with tasks longer than the invocation, and the Server's failure rules. */
export interface DrainConfig<R = never>
  extends Pick<ServerOptions, "retryDelay" | "isFailure" | "errorHandler" | "leaseMs" | "heartbeatIntervalMs"> {
  /** Queues to take tasks from, highest priority first (strict order). */
  readonly queues: ReadonlyArray<string>
  /** The handlers, in any form the Server takes: `(task, signal) => …`, `{ "email:": fn, … }` or a ServeMux. */
  readonly handler: HandlerInput<R>
  /** Tasks run at the same time (default 1). */
  readonly concurrency?: number
  /**
   * Stop taking tasks when less than this is left before the deadline. Default: a quarter of the
   * time left when the drain starts, at least 500 ms and at most 10 000 ms (`defaultSafetyMarginMs`):
   * 750 ms under Lambda's default 3 s timeout, 10 000 ms from 40 s up. A margin as large as the time
   * left leaves no time to take a task: the drain then logs a warning and returns at once.
   */
  readonly safetyMarginMs?: number
  /**
   * What to do with a leased task whose own timeout or deadline ends after the drain's hard stop
   * (deadline − safetyMarginMs/2), i.e. a task the drain may not be able to finish:
   * - `"run"` (default): run it; if it is still running at the hard stop it is stopped and counts as
   *   a failed attempt (retried after its backoff, archived when no retry is left).
   * - `"skip"`: do not start it; it is given back to the retry set, due when this invocation ends
   *   (then forwarded to the back of pending), not counted as a failure, and reported in `skipped`.
   *   For queues that a long-lived worker also serves (a hybrid fleet): the worker runs the long ones.
   *
   * The default is "run" because asynq gives a task with neither timeout nor deadline a 30-minute
   * timeout, longer than any function invocation: "skip" would skip every such task. Choose "skip"
   * only when your tasks carry their own timeouts (and something else runs the long ones).
   * A task whose timeout/deadline ends before the hard stop always runs.
   */
  readonly longTasks?: "run" | "skip"
  /**
   * Record the worker metrics (src/observability/workerMetrics.ts) in the context's MetricRegistry,
   * e.g. for an OTLP metrics exporter that the invocation flushes. Default false. Spans per attempt
   * are made whenever a tracer is installed.
   */
  readonly metrics?: boolean
  /**
   * Scheduled and retry tasks of the drain's queues (what the maintenance tick forwards):
   * - `false` (default): the drain leaves them to the tick; it ends when nothing is pending.
   * - `true`: whenever its queues run out of pending tasks, the drain first moves the ones already
   *   due to pending (one forward pass) and goes on with them.
   * - `{ waitMs }`: that, and when nothing is due yet, it waits for the earliest task that comes due
   *   within `waitMs` (and before its margin), moves it on its millisecond and runs it: a drain
   *   started a little before a task's time runs it on time.
   */
  readonly forwardDue?: boolean | { readonly waitMs: number }
}

/** What one drain did. */
export interface DrainSummary {
  readonly succeeded: number
  /** Failed attempts sent to retry. */
  readonly retried: number
  /** Failed attempts with no retry left (or SkipRetry), archived. */
  readonly archived: number
  /** Tasks dropped by RevokeTask. */
  readonly revoked: number
  /**
   * Tasks given back to the head of their queue without running: leased by a fetch that was in
   * flight at the hard stop. (Tasks that were running at the hard stop are in `stoppedAtDeadline`.)
   */
  readonly requeued: number
  /**
   * Tasks whose handler was still running at the hard stop: stopped, and each counted as a failed
   * attempt with the error "function deadline reached before the task finished", so each is also
   * counted in `retried` or `archived` (or `leaseLost`/`gaveUp` when that write did not land).
   */
  readonly stoppedAtDeadline: number
  /**
   * Tasks not started because their timeout/deadline ends after the hard stop (`longTasks: "skip"`):
   * given back to the retry set (due at this drain's deadline), not counted as failures.
   */
  readonly skipped: number
  /**
   * Tasks whose handler returned `RateLimited`: given back to the retry set, due after their
   * `retryAfter`, not counted as failed attempts (they are not in `retried`).
   */
  readonly rateLimited: number
  /** The rule applied to tasks whose timeout/deadline ends after the hard stop (`DrainConfig.longTasks`). */
  readonly longTasks: "run" | "skip"
  /** Tasks whose lease was lost while running (recovered elsewhere): nothing was written for them. */
  readonly leaseLost: number
  /** Tasks whose outcome could not be written before their lease ran out or the drain had to return (the recoverer takes them back). */
  readonly gaveUp: number
  /** Corrupt messages dequeue set aside (archived with the decode error). */
  readonly corrupt: number
  /**
   * Queues that could not be served (e.g. Redis refused one of their keys), each with its last
   * error: the drain went on with the other queues. Empty when all went well.
   */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /**
   * Why the drain ended: no task left; the safety margin was reached; or Redis failed or stopped
   * answering (`error` says how: a Redis error, no answer by an eighth of the margin before the
   * deadline, or outcomes given up), in which case the counts are what was done until then and the
   * tasks in flight are in `gaveUp` (their leases let `recover` take them back).
   */
  readonly stoppedBecause: "empty" | "deadline" | "redis-unavailable"
  /** With `stoppedBecause: "redis-unavailable"`: what failed (the Redis error, or how long Redis did not answer). */
  readonly error?: string
  /** Milliseconds left before the deadline when the drain returned. */
  readonly remainingMs: number
}

const counter: Record<
  Settled,
  "succeeded" | "retried" | "archived" | "revoked" | "requeued" | "skipped" | "rateLimited" | "leaseLost" | "gaveUp"
> = {
  completed: "succeeded",
  retried: "retried",
  archived: "archived",
  revoked: "revoked",
  requeued: "requeued",
  skipped: "skipped",
  "rate-limited": "rateLimited",
  "lease-lost": "leaseLost",
  "gave-up": "gaveUp"
}

/** The default safety margin of a drain with `remainingMs` left at its start: a quarter of it, at least 500 ms, at most 10 000 ms. */
export const defaultSafetyMarginMs = (remainingMs: number): number =>
  Math.min(10_000, Math.max(500, Math.round(remainingMs / 4)))

/** The margin a drain uses when `remainingMs` is left at its start: `safetyMarginMs` when given, else `defaultSafetyMarginMs`. */
export const drainMarginMs = (config: { readonly safetyMarginMs?: number | undefined }, remainingMs: number): number =>
  config.safetyMarginMs ?? defaultSafetyMarginMs(remainingMs)

type Counts = { -readonly [K in (typeof counter)[Settled] | "corrupt"]: number }

/** What a drain has done so far: read for its summary, also when Redis stopped answering midway. */
interface Progress {
  readonly counts: Counts
  /** Every task this drain leased (each attempt records on it whether the hard stop ended it). */
  readonly leased: Array<ActiveTask>
  /** Each failed queue's last error. */
  readonly failedQueues: Map<string, string>
  /** Leased tasks whose attempt has settled (the others are in flight). */
  settled: number
  stoppedBecause: "empty" | "deadline"
}

const newProgress = (): Progress => ({
  counts: {
    succeeded: 0,
    retried: 0,
    archived: 0,
    revoked: 0,
    requeued: 0,
    skipped: 0,
    rateLimited: 0,
    leaseLost: 0,
    gaveUp: 0,
    corrupt: 0
  },
  leased: [],
  failedQueues: new Map(),
  settled: 0,
  stoppedBecause: "empty"
})

/**
 * The summary of what `p` records, at `remainingMs` before the deadline. Tasks still in flight count
 * as given up. A drain that gave up an outcome, failed on a Redis error (`error`) or was left waiting
 * for Redis stopped because of Redis.
 */
const summaryOf = (p: Progress, longTasks: "run" | "skip", remainingMs: number, error?: string): DrainSummary => {
  const gaveUp = p.counts.gaveUp + (p.leased.length - p.settled)
  const why =
    error ?? (gaveUp > 0 ? `Redis did not take the outcome of ${gaveUp} task(s) before the deadline` : undefined)
  return {
    ...p.counts,
    gaveUp,
    failedQueues: Array.from(p.failedQueues, ([queue, error]) => ({ queue, error })),
    stoppedAtDeadline: p.leased.filter((t) => t.stoppedBy === "function-deadline").length,
    longTasks,
    stoppedBecause: why === undefined ? p.stoppedBecause : "redis-unavailable",
    ...(why === undefined ? {} : { error: why }),
    remainingMs
  }
}

/**
 * Processes tasks until the queues are empty or less than `safetyMarginMs` is left before
 * `deadlineMs` (a time on Effect's Clock). Then it takes no more; tasks still running get until
 * half the margin is left (the hard stop), after which they are stopped (their AbortSignal fires
 * with TaskStopped "function-deadline") and each counts as a failed attempt (retry after its
 * backoff, or archive when no retry is left), so the drain returns before its deadline with a
 * summary and a task too long for an invocation cannot hold the head of its queue. A task whose own
 * timeout/deadline ends after the hard stop is run or skipped as `longTasks` says. An outcome
 * Redis has not taken a quarter of the margin before the deadline is given up (`gaveUp`).
 *
 * Redis failing or not answering never loses the report: a Redis error that stops the drain, or
 * a drain still waiting for Redis an eighth of the margin before the deadline, ends it with the
 * summary of what was done (`stoppedBecause: "redis-unavailable"`, `error`; tasks in flight in
 * `gaveUp`) and an error log line. If the function is killed anyway, the leases expire and
 * `recover` returns its tasks.
 */
export const drain = <R = never>(config: DrainConfig<R>, deadlineMs: number) =>
  Effect.gen(function* () {
    const longTasks = config.longTasks ?? "run"
    if (longTasks !== "run" && longTasks !== "skip") {
      return yield* Effect.fail(
        new InvalidArgument({
          field: "longTasks",
          message: `longTasks must be "run" or "skip", got ${String(longTasks)}`
        })
      )
    }
    const start = yield* Clock.currentTimeMillis
    const margin = drainMarginMs(config, deadlineMs - start)
    const progress = newProgress()
    if (deadlineMs - start < margin) {
      yield* Effect.logWarning(
        `drain: ${Math.max(0, deadlineMs - start)} ms left at the start, under the safety margin of ${margin} ms: no task taken. ` +
          `Raise the function's timeout${config.safetyMarginMs === undefined ? "" : " or lower safetyMarginMs"}.`
      )
      progress.stoppedBecause = "deadline"
      return summaryOf(progress, longTasks, deadlineMs - start)
    }
    const run = yield* drainRun(config, deadlineMs, margin, longTasks, progress)
    // Detached, so that a drain stuck on a Redis that stopped answering (fetches and outcome writes
    // are uninterruptible) is left behind instead of waited for: the summary goes out in time.
    const fiber = yield* Effect.forkDetach(runTasks(config, run, deadlineMs, margin, progress))
    const returnByMs = deadlineMs - margin / 8
    const now = yield* Clock.currentTimeMillis
    const exit = yield* Fiber.await(fiber).pipe(
      Effect.timeoutOption(Duration.millis(Math.max(0, returnByMs - now))),
      Effect.onInterrupt(() => Effect.forkDetach(Fiber.interrupt(fiber)))
    )
    const end = yield* Clock.currentTimeMillis
    let failure: string | undefined
    if (exit._tag === "None") {
      failure = `Redis did not answer for the rest of the invocation (the drain returned ${Math.round(deadlineMs - end)} ms before its deadline)`
      yield* Effect.forkDetach(Fiber.interrupt(fiber))
    } else if (Exit.isFailure(exit.value)) {
      // A Redis error (the only typed failure of the run) is reported with the work done; a defect is not ours to hide.
      const error = Cause.findErrorOption(exit.value.cause)
      if (error._tag === "None") return yield* Effect.failCause(exit.value.cause)
      failure = `${error.value.op}: ${error.value.message}`
    }
    const summary = summaryOf(progress, longTasks, deadlineMs - end, failure)
    yield* reportDrain(summary)
    return summary
  }).pipe(Effect.scoped, Effect.withSpan("Processor.drain"))

/** The processor parts a drain runs its tasks with (the Server's, without its loops). */
const drainRun = <R>(
  config: DrainConfig<R>,
  deadlineMs: number,
  margin: number,
  longTasks: "run" | "skip",
  progress: Progress
) =>
  Effect.gen(function* () {
    const hardStopMs = deadlineMs - margin / 2
    /** Writing an outcome is given up here (the lease lets `recover` take the task back). */
    const settleByMs = deadlineMs - margin / 4
    const options = yield* resolveOptions({
      concurrency: config.concurrency ?? 1,
      // strict priority in the order given
      queues: Object.fromEntries(config.queues.map((q, i) => [q, config.queues.length - i])),
      strictPriority: true,
      ...(config.retryDelay ? { retryDelay: config.retryDelay } : {}),
      ...(config.isFailure ? { isFailure: config.isFailure } : {}),
      ...(config.errorHandler ? { errorHandler: config.errorHandler } : {}),
      ...(config.leaseMs !== undefined ? { leaseMs: config.leaseMs } : {}),
      ...(config.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: config.heartbeatIntervalMs } : {})
    })
    // Metrics and spans, only when asked for. A static import: a dynamic one is bundled anyway, and
    // would be bundled (with Schema through effect's metrics) into every bundle importing the root.
    const wantsTraces = yield* Effect.withFiberSucceed((f) => f.cache.tracer !== undefined && f.cache.tracerEnabled)
    let observer: Observer | undefined
    if (config.metrics === true || wantsTraces) {
      observer = yield* makeObserver({ metrics: config.metrics === true, traces: wantsTraces, queues: config.queues })
    }
    const handler = handlerOf(config.handler)
    const broker = yield* Broker
    const deps: IntakeDeps<R> = {
      options: observer ? { ...options, observer } : options,
      handler: observer ? observer.handler(handler) : handler,
      registry: makeRegistry(),
      broker,
      deadlines: yield* makeDeadlines,
      attempts: yield* FiberSet.make<Settled, never>(),
      prepare: (task) => {
        // A Redis that hangs when the outcome is written must not hold the drain past its deadline.
        task.settleByMs = settleByMs
        progress.leased.push(task)
        // Leased by a fetch in flight at the hard stop: back to the head, it had no turn.
        if (run.stopping) task.stopReason = "shutdown"
        // Cannot finish before the hard stop: given back, due when this invocation is over (so this
        // drain does not take it again), then forwarded behind the tasks waiting in pending.
        else if (longTasks === "skip" && task.deadlineMs > hardStopMs) task.skipUntilMs = deadlineMs
      }
    }
    const run: DrainRun<R> = { deps, intake: makeIntake(deps), hardStopMs, stopping: false }
    return run
  })

/** What a drain runs: its intake (fetch passes only) and the hard stop (`stopping` is set there). */
interface DrainRun<R> {
  readonly deps: IntakeDeps<R>
  readonly intake: Intake<R>
  readonly hardStopMs: number
  /** Set at the hard stop: a task leased by a fetch that was in flight then goes straight back. */
  stopping: boolean
}

/** Takes tasks, one per worker at a time, until the queues are empty or the margin is reached; stops what runs at the hard stop. */
const runTasks = <R>(
  config: DrainConfig<R>,
  run: DrainRun<R>,
  deadlineMs: number,
  margin: number,
  progress: Progress
) =>
  Effect.gen(function* () {
    const { counts, failedQueues } = progress
    const worker = Effect.gen(function* () {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        if (deadlineMs - now < margin) {
          progress.stoppedBecause = "deadline"
          return
        }
        const {
          started,
          corrupt,
          failedQueues: failedNow,
          limited
        } = yield* run.intake.take({ queues: config.queues, count: 1 })
        counts.corrupt += corrupt
        for (const f of failedNow) failedQueues.set(f.queue, f.error)
        const attempt = started[0]
        if (!attempt) {
          // A queue's flow limit held the fetch back: wait for it while the deadline allows (flowWait.ts).
          const waitMs = flowDrainWaitMs(limited, now, run.deps.options.pollIntervalMs)
          if (waitMs !== undefined && deadlineMs - (now + waitMs) >= margin) {
            yield* Effect.sleep(Duration.millis(waitMs))
            continue
          }
          // Nothing pending: with forwardDue, due scheduled and retry tasks come next (forwardDue.ts).
          if (waitMs === undefined && (yield* forwardDueOnEmpty(config.queues, config.forwardDue, deadlineMs - margin)))
            continue
          return
        }
        counts[counter[yield* Fiber.join(attempt)]]++
        progress.settled++
      }
    })
    const { registry, options } = run.deps
    const heartbeat = yield* Effect.forkChild(
      heartbeatLoop(registry, options.leaseMs, options.heartbeatIntervalMs, options.observer),
      { startImmediately: true }
    )
    const start = yield* Clock.currentTimeMillis
    const hardStop = yield* Effect.forkChild(
      Effect.sleep(Duration.millis(Math.max(0, run.hardStopMs - start))).pipe(
        Effect.andThen(
          Effect.sync(() => {
            progress.stoppedBecause = "deadline"
            run.stopping = true
            registry.stopAll("function-deadline")
          })
        )
      ),
      { startImmediately: true }
    )
    yield* Effect.forEach(Array.from({ length: options.concurrency }), () => worker, {
      concurrency: "unbounded",
      discard: true
    }).pipe(Effect.ensuring(Fiber.interruptAll([heartbeat, hardStop])))
  })

/** The log lines of a drain's end: tasks stopped at the hard stop, tasks skipped, Redis failing. */
const reportDrain = (s: DrainSummary) =>
  Effect.gen(function* () {
    if (s.stoppedAtDeadline > 0) {
      yield* Effect.logWarning(
        `drain: ${s.stoppedAtDeadline} task(s) still running at the function's deadline were stopped and counted as failed attempts ` +
          `(retried after their backoff, archived when no retry is left). Tasks that need more time than one invocation belong on a long-lived worker.`
      )
    }
    if (s.skipped > 0) {
      yield* Effect.logInfo(
        `drain: ${s.skipped} task(s) not started: their timeout or deadline ends after this invocation's hard stop (longTasks: "skip"); ` +
          `given back to the retry set, not counted as failures.`
      )
    }
    if (s.stoppedBecause === "redis-unavailable") {
      yield* Effect.logError(
        `drain: stopped because Redis failed or stopped answering: ${s.error}. Done before that: ${s.succeeded} succeeded, ${s.retried} retried, ` +
          `${s.archived} archived; ${s.gaveUp} task(s) in flight given up (their leases let recover take them back).`
      )
    }
  })
