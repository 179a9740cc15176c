/**
 * Runs one attempt of a leased task. A function handler is called in the attempt's own fiber: a
 * plain return is a success, a promise is awaited, and only an Effect it returns (or a handler
 * behind middleware) runs in a child fiber. The handler is stopped when its time is up (timeout
 * from the start of the attempt, or the task's deadline, whichever is first: the shared timer of
 * deadlines.ts, on Effect's Clock) or when the registry stops the task (cancel, lost lease,
 * shutdown, a drain's hard stop): an Effect handler is interrupted, a promise is no longer waited
 * for, and the AbortSignal given to the handler (created only if the handler asks for it) fires.
 * A task a drain marked to skip is given back without running. Then the outcome is written
 * (settle.ts; a success shares its round trip with other tasks finishing at the same time,
 * acker.ts); the task leaves the registry only after that write, so the heartbeat keeps its lease
 * while the write is retried.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import { Broker, type BrokerShape } from "../broker/Broker.js"
import { keepLastHeader } from "../broker/enqueueKeepLast.js"
import { releaseLimitKeyScript } from "../broker/limitKeys.js"
import { runScript } from "../broker/script.js"
import { writeResult } from "../broker/writeResult.js"
import { limitKeyHeader } from "../steps/options.js"
import { encodePayload, type PayloadEncodeError } from "../wire/payload.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { Acker } from "./acker.js"
import { releaseKeepLast } from "./keepLast.js"
import type { Deadlines } from "./deadlines.js"
import { functionDeadlineMessage, TaskCanceled, TaskDeadlineExceeded, TaskStopped } from "./errors.js"
import { type Handler, type HandlerResult, isThenable } from "./Handler.js"
import type { ResolvedOptions } from "./options.js"
import type { ActiveTask, Registry, StopReason } from "./registry.js"
import {
  annotateTask,
  type Settled,
  settleFailure,
  settleRequeue,
  settleSkipped,
  settleSuccess,
  taskAnnotations
} from "./settle.js"
import { makeTask, type Task } from "./Task.js"
import { TaskContext, type TaskContextShape } from "./TaskContext.js"

/** asynq's default timeout when a message has neither timeout nor deadline (30 min). */
export const defaultTimeoutMs = 30 * 60 * 1000

/** asynq's computeDeadline: now + timeout, the deadline, or the earlier of both (whole seconds as asynq). */
export const computeDeadlineMs = (msg: TaskMessage, nowMs: number): number => {
  if (msg.timeout === 0 && msg.deadline === 0) return nowMs + defaultTimeoutMs
  if (msg.timeout !== 0 && msg.deadline !== 0)
    return Math.min(Math.floor(nowMs / 1000) + msg.timeout, msg.deadline) * 1000
  if (msg.timeout !== 0) return nowMs + msg.timeout * 1000
  return msg.deadline * 1000
}

export interface RunDeps<R> {
  readonly options: ResolvedOptions
  readonly handler: Handler<R>
  readonly registry: Registry
  readonly broker: BrokerShape
  readonly acker: Acker
  /** The shared timer of the attempts' time limits. */
  readonly deadlines: Deadlines
}

/** What stops a handler: the registry (StopReason), or the task's own timeout/deadline ("timeout"). */
type StopCause = StopReason | "timeout"

const stoppedMessage: Record<TaskStopped["reason"], string> = {
  shutdown: "server shutting down",
  "lease-lost": "task lease lost",
  "function-deadline": functionDeadlineMessage
}

const stopError = (reason: StopCause) =>
  reason === "timeout"
    ? new TaskDeadlineExceeded({ message: "context deadline exceeded" })
    : reason === "canceled"
      ? new TaskCanceled({ message: "context canceled" })
      : new TaskStopped({ reason, message: stoppedMessage[reason] })

/** The error a failed Exit stands for: the failure, the defect, or an interruption from inside the handler. */
const failureOf = (cause: Cause.Cause<unknown>): unknown =>
  Cause.hasInterruptsOnly(cause) ? new Error("the handler was interrupted") : Cause.squash(cause)

/** The registry's record of a freshly leased task (the fetch registers it before its attempt starts). */
export const makeActiveTask = (msg: TaskMessage, nowMs: number, leaseExpiresAtMs: number): ActiveTask => ({
  msg,
  startedAtMs: nowMs,
  deadlineMs: computeDeadlineMs(msg, nowMs),
  leaseExpiresAtMs,
  settleByMs: undefined,
  skipUntilMs: undefined,
  stopReason: undefined,
  stoppedBy: undefined,
  onStop: undefined,
  onWriteFailed: undefined
})

/** What a handler of one attempt sees (TaskContext); its AbortSignal is created on first read (most handlers never look at it). */
class AttemptContext implements TaskContextShape {
  private controller: AbortController | undefined = undefined
  private reason: { readonly error: unknown } | undefined = undefined
  readonly taskId: string
  readonly retryCount: number
  readonly maxRetry: number
  readonly queue: string
  readonly deadline: Date
  constructor(
    readonly task: Task,
    readonly writeResult: TaskContextShape["writeResult"]
  ) {
    this.taskId = task.id
    this.retryCount = task.retryCount
    this.maxRetry = task.maxRetry
    this.queue = task.queue
    this.deadline = task.deadline
  }
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.reason) this.controller.abort(this.reason.error)
    }
    return this.controller.signal
  }
  /** Fires the signal (if it was ever read; else it is born aborted). */
  abort(error: unknown) {
    if (this.reason) return
    this.reason = { error }
    this.controller?.abort(error)
  }
}

/** How a handler ended: its Exit (none when it was stopped before it finished), and what stopped it, if anything did. */
interface HandlerOutcome {
  readonly exit: Exit.Exit<void, unknown> | undefined
  readonly stoppedBy: StopCause | undefined
}

const finishedAtOnce: HandlerOutcome = { exit: Exit.void, stoppedBy: undefined }

/**
 * Arms the attempt's stops (the registry's stop, its time limit) until `disarm`: `stop` runs once,
 * with the first cause. A task the registry stopped before this is stopped at once.
 */
const armStops = <R>(deps: RunDeps<R>, entry: ActiveTask, stop: (why: StopCause) => void): (() => void) => {
  let stopped = false
  const once = (why: StopCause) => {
    if (stopped) return
    stopped = true
    stop(why)
  }
  entry.onStop = once
  if (entry.stopReason !== undefined) {
    once(entry.stopReason)
    return () => void (entry.onStop = undefined)
  }
  const unwatch = deps.deadlines.add(entry.deadlineMs, () => once("timeout"))
  return () => {
    entry.onStop = undefined
    unwatch()
  }
}

/** Runs an Effect handler in a child fiber (interrupted by a stop); its Exit, or why it was stopped when it did not succeed. */
const runInFiber = <R>(
  deps: RunDeps<R>,
  entry: ActiveTask,
  ctx: TaskContextShape,
  handler: Effect.Effect<void, unknown, R | TaskContext>
) =>
  Effect.flatMap(
    // The handler sees its TaskContext and logs with the task's annotations: one context update for both.
    Effect.forkChild(
      Effect.updateContext(handler, (c: Context.Context<R>) =>
        Context.add(Context.add(c, TaskContext, ctx), References.CurrentLogAnnotations, {
          ...Context.get(c, References.CurrentLogAnnotations),
          ...taskAnnotations(entry.msg)
        })
      ) as Effect.Effect<void, unknown, R>,
      { startImmediately: true }
    ),
    (fiber): Effect.Effect<HandlerOutcome, never, R> => {
      // A handler that finished at once (no await in it): its Exit is there already, no stop to arm.
      const finished = fiber.pollUnsafe()
      if (finished !== undefined) return Effect.succeed({ exit: finished, stoppedBy: undefined })
      let stoppedBy: StopCause | undefined
      const disarm = armStops(deps, entry, (why) => {
        stoppedBy = why
        fiber.interruptUnsafe()
      })
      return Effect.map(Effect.ensuring(Fiber.await(fiber), Effect.sync(disarm)), (exit) => ({ exit, stoppedBy }))
    }
  )

/** Waits for an async handler's promise, or for a stop (the promise is then left to settle on its own; the AbortSignal tells the handler). */
const awaitPromise = <R>(deps: RunDeps<R>, entry: ActiveTask, promise: PromiseLike<unknown>) =>
  Effect.callback<HandlerOutcome>((resume) => {
    let done = false
    let disarm: (() => void) | undefined
    const finish = (outcome: HandlerOutcome) => {
      if (done) return
      done = true
      disarm?.()
      resume(Effect.succeed(outcome))
    }
    // A task stopped before this (e.g. while the handler's synchronous part ran) finishes inside armStops.
    disarm = armStops(deps, entry, (why) => finish({ exit: undefined, stoppedBy: why }))
    if (done) disarm()
    promise.then(
      () => finish(finishedAtOnce),
      (e) => finish({ exit: Exit.fail(e), stoppedBy: undefined })
    )
  })

/**
 * Runs the handler: a function handler (Handler.direct) is called right here, and only an Effect it
 * returns gets a fiber of its own; a promise is awaited, a plain return is a success. A handler
 * without a direct form (behind middleware, or an observer's) runs as an Effect in a child fiber.
 */
const runHandler = <R>(
  deps: RunDeps<R>,
  entry: ActiveTask,
  task: Task,
  ctx: TaskContextShape
): Effect.Effect<HandlerOutcome, never, R> => {
  const direct = deps.handler.direct
  if (direct === undefined)
    return runInFiber(
      deps,
      entry,
      ctx,
      Effect.suspend(() => deps.handler(task))
    )
  let out: HandlerResult<R>
  try {
    out = direct(task, ctx)
  } catch (e) {
    return Effect.succeed({ exit: Exit.fail(e), stoppedBy: undefined })
  }
  if (Effect.isEffect(out))
    return runInFiber(deps, entry, ctx, Effect.asVoid(out as Effect.Effect<unknown, unknown, R | TaskContext>))
  if (isThenable(out)) return awaitPromise(deps, entry, out)
  return Effect.succeed(finishedAtOnce)
}

/**
 * After the outcome of a task with a limit key was written: its key gets its place back at once
 * (lua/releaseLimitKey.lua), so a key held back by its per-key concurrency is served again without
 * waiting for its recheck. A failure only delays that key until its recheck (logged).
 */
const releaseLimitKey = (msg: TaskMessage, limitKey: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    runScript(releaseLimitKeyScript, { queue: msg.queue, id: msg.id, limitKey, nowMs })
  ).pipe(
    Effect.catch((e) =>
      Effect.logWarning(
        `task ${msg.id}: giving limit key ${JSON.stringify(limitKey)} its place back failed: ${e.message}`
      )
    )
  )

/**
 * Runs one attempt of a registered task and writes its outcome; the task leaves the registry after
 * that write. Then, for a task that holds a place (headers written at enqueue), the place is given
 * back: its limit key's (releaseLimitKey) and its keep-last key's (processor/keepLast.ts). A task
 * with neither costs two property lookups.
 */
export const runAttempt = <R>(deps: RunDeps<R>, entry: ActiveTask): Effect.Effect<Settled, never, R | Broker> => {
  const msg = entry.msg
  const limitKey = msg.headers[limitKeyHeader]
  const keepLast = msg.headers[keepLastHeader] !== undefined
  const attempt = runAttemptOnce(deps, entry)
  if (limitKey === undefined && !keepLast) return attempt
  return Effect.tap(attempt, (outcome) =>
    Effect.provideService(
      Effect.andThen(
        limitKey === undefined ? Effect.void : releaseLimitKey(msg, limitKey),
        keepLast ? releaseKeepLast(msg, outcome) : Effect.void
      ),
      Broker,
      deps.broker
    )
  )
}

const runAttemptOnce = <R>(deps: RunDeps<R>, entry: ActiveTask): Effect.Effect<Settled, never, R | Broker> =>
  Effect.ensuring(
    Effect.suspend((): Effect.Effect<Settled, never, R | Broker> => {
      const msg = entry.msg
      // A drain gives back a task it cannot finish, without running it (settle.ts: settleSkipped).
      if (entry.skipUntilMs !== undefined) return annotateTask(msg, settleSkipped(entry, entry.skipUntilMs))
      const writeData = (data: unknown) =>
        Effect.try({ try: () => encodePayload(data) ?? new Uint8Array(), catch: (e) => e as PayloadEncodeError }).pipe(
          Effect.flatMap((result) => writeResult({ queue: msg.queue, id: msg.id, result })),
          Effect.provideService(Broker, deps.broker)
        )
      const task: Task = makeTask(msg, new Date(entry.deadlineMs), {
        taskId: msg.id,
        write: (data) => Effect.runPromise(writeData(data))
      })
      const ctx = new AttemptContext(task, writeData)
      /** What ends the attempt once the handler is done (or was never started: `ran` false). */
      const conclude = (
        outcome: HandlerOutcome | undefined,
        stoppedBefore: StopCause | undefined
      ): Effect.Effect<Settled, never, Broker> => {
        let stoppedBy = stoppedBefore
        let exit: Exit.Exit<void, unknown> | undefined
        // A handler that succeeded counts as done even when a stop came at the same moment.
        if (outcome !== undefined) {
          if (outcome.stoppedBy === undefined || (outcome.exit !== undefined && Exit.isSuccess(outcome.exit)))
            exit = outcome.exit
          else stoppedBy = entry.stoppedBy = outcome.stoppedBy
        }
        if (stoppedBy !== undefined) ctx.abort(stopError(stoppedBy))
        // The common case, a success, logs nothing unless its write fails (settleSuccess annotates that).
        if (exit !== undefined && Exit.isSuccess(exit)) return settleSuccess(entry, deps.acker)
        return annotateTask(msg, settleOther(deps, entry, task, exit, stoppedBy, outcome !== undefined))
      }
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (entry.deadlineMs - now <= 0) return conclude(undefined, "timeout")
        if (entry.stopReason !== undefined) return conclude(undefined, entry.stopReason)
        return Effect.flatMap(runHandler(deps, entry, task, ctx), (outcome) => conclude(outcome, undefined))
      })
    }),
    Effect.sync(() => deps.registry.remove(entry))
  )

/** Writes the outcome of an attempt that did not succeed: its failure, or what stopped it. */
const settleOther = <R>(
  deps: RunDeps<R>,
  entry: ActiveTask,
  task: Task,
  exit: Exit.Exit<void, unknown> | undefined,
  stoppedBy: StopCause | undefined,
  ran: boolean
) =>
  Effect.suspend((): Effect.Effect<Settled, never, Broker> => {
    const msg = entry.msg
    if (exit !== undefined && Exit.isFailure(exit))
      return settleFailure(deps.options, entry, task, failureOf(exit.cause))
    switch (stoppedBy) {
      case "shutdown":
        return settleRequeue(entry)
      case "function-deadline":
        // A drain's hard stop: a counted failed attempt if the handler ran; a task stopped before its
        // handler started had no turn and goes back to the head of its queue.
        return ran ? settleFailure(deps.options, entry, task, stopError(stoppedBy), true) : settleRequeue(entry)
      case "lease-lost":
        return Effect.logWarning(
          `task ${msg.id}: lease lost, handler stopped; nothing written (the task is someone else's now)`
        ).pipe(Effect.as<Settled>("lease-lost"))
      default:
        return settleFailure(deps.options, entry, task, stopError(stoppedBy!))
    }
  })
