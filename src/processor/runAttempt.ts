/**
 * Runs one attempt of a leased task: the handler runs in one child fiber, which is interrupted when its time
 * is up (timeout from the start of the attempt, or the task's deadline, whichever is first; a
 * sleep on Effect's Clock) or when the registry stops the task (cancel, lost lease, shutdown, a
 * drain's hard stop); the AbortSignal given to the handler (created only if the handler asks for it)
 * then fires. A task a drain marked to skip is given back without running. Then the
 * outcome is written (settle.ts; a success shares its round trip with other tasks finishing at
 * the same time, acker.ts); the task leaves the registry only after that write, so the heartbeat
 * keeps its lease while the write is retried.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import { Broker, type BrokerShape } from "../broker/Broker.js"
import { writeResult } from "../broker/writeResult.js"
import { encodePayload, type PayloadEncodeError } from "../wire/payload.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { Acker } from "./acker.js"
import type { Deadlines } from "./deadlines.js"
import { functionDeadlineMessage, TaskCanceled, TaskDeadlineExceeded, TaskStopped } from "./errors.js"
import type { Handler } from "./Handler.js"
import type { ResolvedOptions } from "./options.js"
import type { ActiveTask, Registry, StopReason } from "./registry.js"
import { annotateTask, type Settled, settleFailure, settleRequeue, settleSkipped, settleSuccess, taskAnnotations } from "./settle.js"
import { makeTask, type Task } from "./Task.js"
import { TaskContext, type TaskContextShape } from "./TaskContext.js"

/** asynq's default timeout when a message has neither timeout nor deadline (30 min). */
export const defaultTimeoutMs = 30 * 60 * 1000

/** asynq's computeDeadline: now + timeout, the deadline, or the earlier of both (whole seconds as asynq). */
export const computeDeadlineMs = (msg: TaskMessage, nowMs: number): number => {
  if (msg.timeout === 0 && msg.deadline === 0) return nowMs + defaultTimeoutMs
  if (msg.timeout !== 0 && msg.deadline !== 0) return Math.min(Math.floor(nowMs / 1000) + msg.timeout, msg.deadline) * 1000
  if (msg.timeout !== 0) return nowMs + msg.timeout * 1000
  return msg.deadline * 1000
}

export interface RunDeps<R> {
  readonly options: ResolvedOptions
  readonly handler: Handler<R>
  readonly registry: Registry
  readonly broker: BrokerShape
  readonly acker: Acker
  /** The shared timer of the attempts' time limits (without it, each attempt sleeps in a fiber of its own). */
  readonly deadlines?: Deadlines
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

/** Runs the handler in a child fiber; its Exit, or why it was stopped when it did not succeed. */
const runHandler = <R>(deps: RunDeps<R>, entry: ActiveTask, task: Task, ctx: TaskContextShape, remainingMs: number) =>
  Effect.gen(function* () {
    // The handler sees its TaskContext and logs with the task's annotations: one context update for both.
    const inContext = Effect.updateContext(Effect.suspend(() => deps.handler(task)), (c: Context.Context<R>) =>
      Context.add(Context.add(c, TaskContext, ctx), References.CurrentLogAnnotations, { ...Context.get(c, References.CurrentLogAnnotations), ...taskAnnotations(entry.msg) })
    ) as Effect.Effect<void, unknown, R>
    const fiber = yield* Effect.forkChild(inContext, { startImmediately: true })
    // A handler that finished at once (no await in it): its Exit is there already, no stop to arm.
    const finished = fiber.pollUnsafe()
    if (finished !== undefined) return { exit: finished, stoppedBy: undefined as StopCause | undefined }
    let stoppedBy: StopCause | undefined
    let timer: Fiber.Fiber<void> | undefined
    let unwatch: (() => void) | undefined
    {
      const stop = (why: StopCause) => {
        if (stoppedBy !== undefined) return
        stoppedBy = why
        fiber.interruptUnsafe()
      }
      entry.onStop = stop
      if (entry.stopReason !== undefined) stop(entry.stopReason)
      else if (deps.deadlines) unwatch = deps.deadlines.add(entry.deadlineMs, () => stop("timeout"))
      else {
        // The attempt's time runs on Effect's Clock (TestClock in tests).
        timer = yield* Effect.forkChild(Effect.sleep(Duration.millis(remainingMs)).pipe(Effect.andThen(Effect.sync(() => stop("timeout")))), {
          startImmediately: true
        })
      }
    }
    const exit = yield* Fiber.await(fiber).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          entry.onStop = undefined
          timer?.interruptUnsafe()
          unwatch?.()
        })
      )
    )
    return { exit, stoppedBy }
  })

/** Runs one attempt of a registered task and writes its outcome; the task leaves the registry after that write. */
export const runAttempt = <R>(deps: RunDeps<R>, entry: ActiveTask): Effect.Effect<Settled, never, R | Broker> =>
  Effect.gen(function* () {
    const msg = entry.msg
    // A drain gives back a task it cannot finish, without running it (settle.ts: settleSkipped).
    if (entry.skipUntilMs !== undefined) return yield* annotateTask(entry.msg, settleSkipped(entry, entry.skipUntilMs))
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
    const now = yield* Clock.currentTimeMillis
    const remaining = entry.deadlineMs - now
    let stoppedBy: StopCause | undefined
    let exit: Exit.Exit<void, unknown> | undefined
    /** Whether the handler was started (a stop before that means the task had no turn). */
    let ran = false
    if (remaining <= 0) stoppedBy = "timeout"
    else if (entry.stopReason !== undefined) stoppedBy = entry.stopReason
    else {
      ran = true
      const r = yield* runHandler(deps, entry, task, ctx, remaining)
      // A handler that succeeded counts as done even when a stop came at the same moment.
      if (r.stoppedBy === undefined || Exit.isSuccess(r.exit)) exit = r.exit
      else stoppedBy = entry.stoppedBy = r.stoppedBy
    }
    if (stoppedBy !== undefined) ctx.abort(stopError(stoppedBy))
    // The common case, a success, logs nothing unless its write fails (settleSuccess annotates that).
    if (exit !== undefined && Exit.isSuccess(exit)) return yield* settleSuccess(entry, deps.acker)
    return yield* annotateTask(msg, settleOther(deps, entry, task, exit, stoppedBy, ran))
  }).pipe(Effect.ensuring(Effect.sync(() => deps.registry.remove(entry.msg.id))))

/** Writes the outcome of an attempt that did not succeed: its failure, or what stopped it. */
const settleOther = <R>(deps: RunDeps<R>, entry: ActiveTask, task: Task, exit: Exit.Exit<void, unknown> | undefined, stoppedBy: StopCause | undefined, ran: boolean) =>
  Effect.suspend((): Effect.Effect<Settled, never, Broker> => {
    const msg = entry.msg
    if (exit !== undefined && Exit.isFailure(exit)) return settleFailure(deps.options, entry, task, failureOf(exit.cause))
    switch (stoppedBy) {
      case "shutdown":
        return settleRequeue(entry)
      case "function-deadline":
        // A drain's hard stop: a counted failed attempt if the handler ran; a task stopped before its
        // handler started had no turn and goes back to the head of its queue.
        return ran ? settleFailure(deps.options, entry, task, stopError(stoppedBy), true) : settleRequeue(entry)
      case "lease-lost":
        return Effect.logWarning(`task ${msg.id}: lease lost, handler stopped; nothing written (the task is someone else's now)`).pipe(
          Effect.as<Settled>("lease-lost")
        )
      default:
        return settleFailure(deps.options, entry, task, stopError(stoppedBy!))
    }
  })
