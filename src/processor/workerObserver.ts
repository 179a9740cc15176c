/**
 * The processor's observer (observer.ts): worker metrics (src/observability/workerMetrics.ts) and one
 * span per attempt. Made once when a Server or drain starts, and only when metrics are on or a
 * tracer is installed; the processor then calls it once per attempt and fetch.
 *
 * The attempt's span follows OpenTelemetry's messaging conventions: a consumer span named
 * `process <queue>`, `messaging.system=asynq`, `messaging.destination.name` (the queue),
 * `messaging.message.id` (the task id), the retry count and the task type; it continues the trace
 * of the task's `traceparent` header (the enqueue's span) and is the parent of the handler's own
 * spans. The outcome is an attribute (`asynq.outcome`), each state move an event
 * (`asynq.task.active`, then `asynq.task.completed` / `retry` / `archived` / `pending` / `deleted`),
 * and a failed attempt (retried or archived) ends with an error status carrying its message.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Tracer from "effect/Tracer"
import { functionDeadlineMessage } from "./errors.js"
import type { Handler } from "./Handler.js"
import type { Observer } from "./observer.js"
import type { ActiveTask } from "./registry.js"
import type { Settled } from "./settle.js"
import { parseTraceparent, traceparentHeader, tracerInstalled } from "../steps/traceContext.js"
import { makeWorkerMetricsRecorder } from "../observability/workerMetrics.js"

export interface ObserverConfig {
  /** Record the worker metrics. */
  readonly metrics: boolean
  /** Make a span per attempt (default: when a tracer is installed in the starting context). */
  readonly traces?: boolean
  /** The queues served (their in-flight gauges start at 0). */
  readonly queues: ReadonlyArray<string>
}

/** The task's state after each outcome (asynq's state names), for the span's state-move event. */
const stateAfter: Record<Settled, string | undefined> = {
  completed: "completed",
  retried: "retry",
  archived: "archived",
  revoked: "deleted",
  requeued: "pending",
  skipped: "retry",
  "rate-limited": "retry",
  "lease-lost": undefined,
  "gave-up": undefined
}

/** Why the processor stopped a handler, as the error a stopped attempt is retried with. */
const stopMessage: Record<NonNullable<ActiveTask["stoppedBy"]>, string> = {
  timeout: "context deadline exceeded",
  canceled: "context canceled",
  shutdown: "server shutting down",
  "lease-lost": "task lease lost",
  "function-deadline": functionDeadlineMessage
}

/** The observer for a processor starting in the current context, or undefined when there is nothing to observe (no cost then). */
export const makeObserver = (config: ObserverConfig): Effect.Effect<Observer | undefined> =>
  Effect.withFiber((fiber) => {
    const traces = config.traces ?? tracerInstalled(fiber)
    if (!config.metrics && !traces) return Effect.succeed(undefined)
    const clock = fiber.getRef(Clock.Clock)
    const recorder = config.metrics ? makeWorkerMetricsRecorder(fiber.context, config.queues) : undefined
    /** The handler failure of each running attempt (task id → error), for its span's status. */
    const failures = new Map<string, unknown>()

    const handler = <R>(h: Handler<R>): Handler<R> =>
      traces
        ? (task) =>
            h(task).pipe(
              Effect.onError((cause) =>
                Effect.sync(() => {
                  if (!Cause.hasInterruptsOnly(cause)) failures.set(task.id, Cause.squash(cause))
                })
              )
            )
        : h

    const measured = <R>(
      entry: ActiveTask,
      run: Effect.Effect<Settled, never, R>,
      onEnd?: (outcome: Settled | undefined) => void
    ) => {
      const startMs = clock.currentTimeMillisUnsafe()
      recorder?.attemptStarted(entry.msg.queue)
      return Effect.onExit(run, (exit) =>
        Effect.sync(() => {
          const outcome = Exit.isSuccess(exit) ? exit.value : undefined
          recorder?.attemptEnded(
            entry.msg.queue,
            entry.msg.type,
            outcome ?? "interrupted",
            (clock.currentTimeMillisUnsafe() - startMs) / 1000
          )
          onEnd?.(outcome)
        })
      )
    }

    const traced = <R>(entry: ActiveTask, run: Effect.Effect<Settled, never, R>): Effect.Effect<Settled, never, R> => {
      const msg = entry.msg
      return Effect.useSpan(`process ${msg.queue}`, attemptSpanOptions(msg), (span) => {
        span.event("asynq.task.active", clock.currentTimeNanosUnsafe(), { "asynq.task.state": "active" })
        return measured(entry, Effect.withParentSpan(run, span), (outcome) => {
          const now = clock.currentTimeNanosUnsafe()
          const failure = failures.get(msg.id)
          failures.delete(msg.id)
          const stopped = entry.stoppedBy
          if (stopped !== undefined) span.event("asynq.handler.stopped", now, { "asynq.stop.reason": stopped })
          if (outcome === undefined) return // interrupted: the span ends with the interruption
          span.attribute("asynq.outcome", outcome)
          const state = stateAfter[outcome]
          if (outcome === "lease-lost") span.event("asynq.lease.lost", now)
          const error =
            outcome === "retried" || outcome === "archived"
              ? (failure ?? (stopped !== undefined ? new Error(stopMessage[stopped]) : undefined))
              : undefined
          if (state !== undefined) {
            span.event(
              `asynq.task.${state}`,
              now,
              error === undefined
                ? { "asynq.task.state": state }
                : { "asynq.task.state": state, "error.message": errorMessage(error) }
            )
          }
          span.end(now, error === undefined ? Exit.void : Exit.fail(error))
        })
      })
    }

    return Effect.succeed<Observer>({
      handler,
      attempt: traces ? traced : (entry, run) => measured(entry, run),
      fetched: (count) => recorder?.fetched(count),
      leasesExtended: (queue, count) => recorder?.leasesExtended(queue, count)
    })
  })

/** An attempt's span: a consumer span with the messaging attributes, under the enqueue's trace when the task carries one. */
const attemptSpanOptions = (msg: ActiveTask["msg"]): Tracer.SpanOptionsNoTrace => {
  const parent = parseTraceparent(msg.headers[traceparentHeader])
  return {
    kind: "consumer",
    attributes: {
      "messaging.system": "asynq",
      "messaging.operation.name": "process",
      "messaging.operation.type": "process",
      "messaging.destination.name": msg.queue,
      "messaging.message.id": msg.id,
      "messaging.message.body.size": msg.payload?.length ?? 0,
      "asynq.task.type": msg.type,
      "asynq.task.retry_count": msg.retried,
      "asynq.task.max_retry": msg.retry
    },
    ...(parent ? { parent } : {})
  }
}

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : typeof e === "string" ? e : String(e))
