/**
 * Runs one leased task: the handler races its deadline (timeout from the start of the attempt, or
 * the task's deadline, whichever is first) and the task's stop signal (cancel, lost lease,
 * shutdown). The loser is interrupted and the AbortSignal given to the handler fires. Then the
 * outcome is written (settle.ts); the task leaves the registry only after that write, so the
 * heartbeat keeps its lease while the write is retried.
 */
import { Cause, Clock, Deferred, Duration, Effect, Exit } from "effect"
import { Broker, type BrokerShape } from "../broker/Broker.js"
import { writeResult } from "../steps/writeResult.js"
import { encodePayload } from "../wire/payload.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { TaskCanceled, TaskDeadlineExceeded } from "./errors.js"
import type { Handler } from "./Handler.js"
import type { ResolvedOptions } from "./options.js"
import type { ActiveTask, Registry, StopReason } from "./registry.js"
import { type Settled, settleFailure, settleRequeue, settleSuccess } from "./settle.js"
import { makeTask, type Task } from "./Task.js"
import { TaskContext } from "./TaskContext.js"

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
}

type Outcome = { readonly _tag: "Done"; readonly exit: Exit.Exit<void, unknown> } | { readonly _tag: "Stopped"; readonly reason: StopReason | "deadline" }

const stopError = (reason: StopReason | "deadline") =>
  reason === "deadline"
    ? new TaskDeadlineExceeded({ message: "context deadline exceeded" })
    : reason === "canceled"
      ? new TaskCanceled({ message: "context canceled" })
      : new Error(reason === "shutdown" ? "server shutting down" : "task lease lost")

/** The error a failed Exit stands for: the failure, the defect, or an interruption from inside the handler. */
const failureOf = (cause: Cause.Cause<unknown>): unknown =>
  Cause.hasInterruptsOnly(cause) ? new Error("the handler was interrupted") : Cause.squash(cause)

/** Creates the registry entry for a freshly leased task (the fetcher registers it before forking). */
export const makeEntry = (msg: TaskMessage, nowMs: number, leaseExpiresAtMs: number): ActiveTask => ({
  msg,
  startedAtMs: nowMs,
  deadlineMs: computeDeadlineMs(msg, nowMs),
  leaseExpiresAtMs,
  stop: Deferred.makeUnsafe<StopReason>()
})

export const runTask = <R>(deps: RunDeps<R>, entry: ActiveTask): Effect.Effect<Settled, never, R | Broker> =>
  Effect.gen(function* () {
    const msg = entry.msg
    const provideBroker = Effect.provideService(Broker, deps.broker)
    const writeData = (data: unknown) =>
      Effect.try({ try: () => encodePayload(data) ?? new Uint8Array(), catch: (e) => e as import("../wire/payload.js").PayloadEncodeError }).pipe(
        Effect.flatMap((result) => writeResult({ queue: msg.queue, id: msg.id, result })),
        provideBroker
      )
    const controller = new AbortController()
    const task: Task = makeTask(msg, new Date(entry.deadlineMs), {
      taskId: msg.id,
      write: (data) => Effect.runPromise(writeData(data))
    })
    const ctx = TaskContext.of({
      task,
      taskId: msg.id,
      retryCount: msg.retried,
      maxRetry: msg.retry,
      queue: msg.queue,
      deadline: task.deadline,
      signal: controller.signal,
      writeResult: writeData
    })
    const now = yield* Clock.currentTimeMillis
    const remaining = entry.deadlineMs - now
    const outcome: Outcome =
      remaining <= 0
        ? { _tag: "Stopped", reason: "deadline" }
        : yield* Effect.raceFirst(
            Effect.suspend(() => deps.handler(task)).pipe(
              Effect.provideService(TaskContext, ctx),
              Effect.exit,
              Effect.map((exit): Outcome => ({ _tag: "Done", exit }))
            ),
            Effect.raceFirst(
              Deferred.await(entry.stop).pipe(Effect.map((reason): Outcome => ({ _tag: "Stopped", reason }))),
              Effect.sleep(Duration.millis(remaining)).pipe(Effect.as<Outcome>({ _tag: "Stopped", reason: "deadline" }))
            )
          )
    if (outcome._tag === "Stopped") controller.abort(stopError(outcome.reason))
    const settled: Settled = yield* (() => {
      if (outcome._tag === "Done") {
        return Exit.isSuccess(outcome.exit) ? settleSuccess(entry) : settleFailure(deps.options, entry, task, failureOf(outcome.exit.cause))
      }
      switch (outcome.reason) {
        case "shutdown":
          return settleRequeue(entry)
        case "lease-lost":
          return Effect.logWarning(`task ${msg.id}: lease lost, handler stopped; nothing written (the task is someone else's now)`).pipe(
            Effect.as<Settled>("lease-lost")
          )
        default:
          return settleFailure(deps.options, entry, task, stopError(outcome.reason))
      }
    })()
    return settled
  }).pipe(
    Effect.ensuring(Effect.sync(() => deps.registry.remove(entry.msg.id))),
    Effect.annotateLogs({ task: entry.msg.id, type: entry.msg.type, queue: entry.msg.queue })
  )
