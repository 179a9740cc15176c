/**
 * Throttle at enqueue (an enqueue mode every asynq server honours: the tasks are ordinary pending
 * tasks): at most one task per throttle key per window, the first; the enqueues after it in the
 * same window are dropped and told which task their window let through.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Broker } from "../broker/Broker.js"
import { registerQueueScript } from "../broker/enqueue.js"
import { enqueueThrottledScript } from "../broker/enqueueThrottled.js"
import { InvalidArgument, type TaskIdConflict } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import { runScript } from "../broker/script.js"
import type { TaskDefinition } from "./TaskDefinition.js"
import { type PreparedEnqueue, prepareEnqueue } from "./enqueue.js"
import type { EnqueueOptions } from "./options.js"
import type { TaskInfo } from "./taskInfo.js"
import { currentTraceHeaders } from "./traceContext.js"
import { durationAtLeast } from "./validate.js"

/** A throttle or debounce: the key tasks are grouped by (any text, e.g. `"report:" + userId`) and the window, ms. */
export interface EnqueueModeOptions {
  readonly key: string
  /** The window, milliseconds (>= 1). */
  readonly window: number
}

/** How a throttled or debounced enqueue can fail (nothing is written then). */
export type EnqueueModeError = InvalidArgument | TaskIdConflict | RedisError

/** What `enqueueThrottled` did: the task was enqueued (its info), or throttled (the id of the task its window let through). */
export type EnqueueThrottledResult =
  | { readonly throttled: false; readonly info: TaskInfo }
  | { readonly throttled: true; readonly windowTaskId: string }

/** Adds the queue to `asynq:queues` unless the broker saw that done within the last minute. */
export const ensureQueueRegistered = (queue: string, nowMs: number) =>
  Effect.flatMap(Broker, ({ knownQueues }) =>
    knownQueues.has(queue, nowMs)
      ? Effect.void
      : Effect.tap(runScript(registerQueueScript, queue), () => Effect.sync(() => knownQueues.add(queue, nowMs)))
  )

/**
 * Checks a mode's key and window, and that the options leave the task's timing to the mode (no
 * processAt, processIn, group or unique), then prepares the write.
 */
export const prepareModeEnqueue = (
  mode: "throttle" | "debounce",
  task: string | TaskDefinition<any>,
  payload: unknown,
  modeOptions: EnqueueModeOptions,
  options: EnqueueOptions | undefined,
  nowMs: number
): Effect.Effect<PreparedEnqueue & { readonly windowMs: number }, InvalidArgument> =>
  Effect.gen(function* () {
    if (typeof modeOptions.key !== "string" || modeOptions.key.length === 0) {
      return yield* new InvalidArgument({ field: `${mode}.key`, message: `${mode}.key must be a non-empty string` })
    }
    const windowMs = yield* durationAtLeast(`${mode}.window`, modeOptions.window, 1)
    const owned =
      mode === "debounce"
        ? (["processAt", "processIn", "group", "unique", "taskId", "limitKey"] as const)
        : (["processAt", "processIn", "group", "unique", "limitKey"] as const)
    for (const field of owned) {
      if (options?.[field] !== undefined)
        return yield* new InvalidArgument({
          field,
          message: `${field} cannot be combined with ${mode}: the ${mode} decides when the task runs and which one does`
        })
    }
    const withTiming = mode === "debounce" ? { ...options, processIn: windowMs } : options
    // With a span active (and a tracer installed) the task carries its W3C traceparent, as with enqueue.
    const prepared = prepareEnqueue(task, payload, withTiming, nowMs, yield* currentTraceHeaders)
    if (Result.isFailure(prepared)) return yield* prepared.failure
    return { ...prepared.success, windowMs }
  })

/**
 * Enqueues a task unless its throttle key already let one through in the current window (the
 * window starts with the task let through). Throttled enqueues write nothing. One round trip (two
 * for a queue's first enqueue). InvalidArgument for a bad key or window, or options that set the
 * task's timing (processAt, processIn, group, unique).
 */
export const enqueueThrottled: {
  <A>(
    task: TaskDefinition<A>,
    payload: A,
    throttle: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueThrottledResult, EnqueueModeError, Broker>
  (
    type: string,
    payload: unknown,
    throttle: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueThrottledResult, EnqueueModeError, Broker>
} = (task: string | TaskDefinition<any>, payload: unknown, throttle: EnqueueModeOptions, options?: EnqueueOptions) =>
  enqueueThrottledImpl(task, payload, throttle, options)

const enqueueThrottledImpl = Effect.fn("Steps.enqueueThrottled")(function* (
  task: string | TaskDefinition<any>,
  payload: unknown,
  throttle: EnqueueModeOptions,
  options: EnqueueOptions | undefined
) {
  const nowMs = yield* Clock.currentTimeMillis
  const p = yield* prepareModeEnqueue("throttle", task, payload, throttle, options, nowMs)
  yield* ensureQueueRegistered(p.write.msg.queue, nowMs)
  const outcome = yield* runScript(enqueueThrottledScript, {
    msg: p.write.msg,
    nowMs,
    key: throttle.key,
    windowMs: p.windowMs
  })
  return outcome.throttled
    ? ({
        throttled: true,
        windowTaskId: outcome.windowTaskId
      } satisfies EnqueueThrottledResult as EnqueueThrottledResult)
    : ({ throttled: false, info: p.info("pending") } satisfies EnqueueThrottledResult as EnqueueThrottledResult)
})
