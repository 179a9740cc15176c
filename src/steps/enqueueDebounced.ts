/**
 * Debounce at enqueue (an enqueue mode every asynq server honours: the task is an ordinary
 * scheduled task, which any asynq forwarder makes pending when due): each enqueue of a debounce
 * key schedules its task a window from now and replaces the key's earlier task while that one is
 * still scheduled, so a burst of enqueues runs once, with the last payload, a window after the
 * burst's last enqueue.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { enqueueDebouncedScript } from "../broker/enqueueDebounced.js"
import { runScript } from "../broker/script.js"
import type { TaskDefinition } from "./TaskDefinition.js"
import type { Broker } from "../broker/Broker.js"
import {
  type EnqueueModeError,
  type EnqueueModeOptions,
  ensureQueueRegistered,
  prepareModeEnqueue
} from "./enqueueThrottled.js"
import type { EnqueueOptions } from "./options.js"
import type { TaskInfo } from "./taskInfo.js"

/** What `enqueueDebounced` did: the task scheduled (its info) and whether it replaced the key's earlier task. */
export interface EnqueueDebouncedResult {
  readonly info: TaskInfo
  readonly replaced: boolean
}

/** How long a debounce key outlives its window: a forwarder running late still finds its task replaced, not doubled. */
const keyMarginMs = 60_000

/**
 * Schedules a task a window from now, replacing the debounce key's earlier task while that one is
 * still scheduled (the earlier task is deleted; one already pending, running or done is left
 * alone, and this one runs after it). Each task has its own id: the result's info names the one
 * that will run unless replaced in turn. One round trip (two for a queue's first enqueue).
 * InvalidArgument for a bad key or window, or options that set the task's timing (processAt,
 * processIn, group, unique, taskId).
 */
export const enqueueDebounced: {
  <A>(
    task: TaskDefinition<A>,
    payload: A,
    debounce: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueDebouncedResult, EnqueueModeError, Broker>
  (
    type: string,
    payload: unknown,
    debounce: EnqueueModeOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueDebouncedResult, EnqueueModeError, Broker>
} = (task: string | TaskDefinition<any>, payload: unknown, debounce: EnqueueModeOptions, options?: EnqueueOptions) =>
  enqueueDebouncedImpl(task, payload, debounce, options)

const enqueueDebouncedImpl = Effect.fn("Steps.enqueueDebounced")(function* (
  task: string | TaskDefinition<any>,
  payload: unknown,
  debounce: EnqueueModeOptions,
  options: EnqueueOptions | undefined
) {
  const nowMs = yield* Clock.currentTimeMillis
  const p = yield* prepareModeEnqueue("debounce", task, payload, debounce, options, nowMs)
  yield* ensureQueueRegistered(p.write.msg.queue, nowMs)
  const processAtMs = nowMs + p.windowMs
  const replaced = yield* runScript(enqueueDebouncedScript, {
    msg: p.write.msg,
    key: debounce.key,
    processAtMs,
    keyTtlMs: p.windowMs + keyMarginMs
  })
  return { info: p.info("scheduled"), replaced } satisfies EnqueueDebouncedResult as EnqueueDebouncedResult
})
