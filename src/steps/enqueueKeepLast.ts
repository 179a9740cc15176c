/**
 * Keep-last-while-active at enqueue (an enqueue mode every asynq server honours: the tasks are
 * ordinary pending or scheduled tasks): per keep-last key, at most one task waits while the key's
 * current task has not finished, and a new enqueue replaces the waiting one (the last wins). The
 * waiting task runs once the current one finishes (the worker that settles it releases the
 * waiting one), or at its latest start (`maxWait`) should nothing release it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Broker } from "../broker/Broker.js"
import { enqueueKeepLastScript, keepLastHeader } from "../broker/enqueueKeepLast.js"
import { InvalidArgument } from "../broker/errors.js"
import { runScript } from "../broker/script.js"
import type { TaskDefinition } from "./TaskDefinition.js"
import { prepareEnqueue } from "./enqueue.js"
import { type EnqueueModeError, ensureQueueRegistered } from "./enqueueThrottled.js"
import type { EnqueueOptions } from "./options.js"
import type { TaskInfo } from "./taskInfo.js"
import { currentTraceHeaders } from "./traceContext.js"
import { durationAtLeast } from "./validate.js"

/** A keep-last enqueue: the key tasks are grouped by, and how long a waiting task waits at most. */
export interface EnqueueKeepLastOptions {
  /** The keep-last key (any non-empty text, e.g. `"sync:" + userId`). */
  readonly key: string
  /**
   * The latest a waiting task starts, milliseconds from its enqueue, should nothing release it
   * sooner (a Go asynq server ran the current task, or the worker that ran it died before
   * releasing). Default: the task's timeout, at least 30 minutes (asynq's default timeout). At
   * least 1000.
   */
  readonly maxWait?: number
}

/** What `enqueueKeepLast` did: the task (its info; state "pending" or, waiting, "scheduled"), whether it waits, and whether it replaced the key's waiting task. */
export interface EnqueueKeepLastResult {
  readonly info: TaskInfo
  /** The key's current task has not finished: this task waits (scheduled) and runs after it. */
  readonly waiting: boolean
  /** This task replaced the key's waiting task (deleted: its payload will not run). */
  readonly replaced: boolean
}

/** asynq's timeout for a task with neither timeout nor deadline: the default `maxWait` floor. */
const defaultMaxWaitMs = 30 * 60_000
/** How long a keep-last key outlives its latest write (the workers delete it when the key is free). */
const keyMarginMs = 7 * 24 * 3_600_000

const owned = ["processAt", "processIn", "group", "unique", "taskId"] as const

/**
 * Enqueues a task under a keep-last key. When none of the key's tasks is unfinished (pending,
 * running or waiting for a retry), it is enqueued as usual (pending) and becomes the key's current
 * task. Otherwise it waits (a scheduled task due at its latest start, `maxWait`) and replaces the
 * key's waiting task, if any: once the current task finishes (completed, archived or dropped), the
 * worker that settled it makes the waiting task pending. One round trip (two for a queue's first
 * enqueue). InvalidArgument for a bad key or maxWait, or options that set the task's timing or id
 * (processAt, processIn, group, unique, taskId).
 */
export const enqueueKeepLast: {
  <A>(
    task: TaskDefinition<A>,
    payload: A,
    keepLast: EnqueueKeepLastOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueKeepLastResult, EnqueueModeError, Broker>
  (
    type: string,
    payload: unknown,
    keepLast: EnqueueKeepLastOptions,
    options?: EnqueueOptions
  ): Effect.Effect<EnqueueKeepLastResult, EnqueueModeError, Broker>
} = (
  task: string | TaskDefinition<any>,
  payload: unknown,
  keepLast: EnqueueKeepLastOptions,
  options?: EnqueueOptions
) => enqueueKeepLastImpl(task, payload, keepLast, options)

const enqueueKeepLastImpl = Effect.fn("Steps.enqueueKeepLast")(function* (
  task: string | TaskDefinition<any>,
  payload: unknown,
  keepLast: EnqueueKeepLastOptions,
  options: EnqueueOptions | undefined
) {
  const nowMs = yield* Clock.currentTimeMillis
  if (typeof keepLast?.key !== "string" || keepLast.key.length === 0) {
    return yield* new InvalidArgument({ field: "keepLast.key", message: "keepLast.key must be a non-empty string" })
  }
  const maxWait =
    keepLast.maxWait === undefined ? undefined : yield* durationAtLeast("keepLast.maxWait", keepLast.maxWait, 1000)
  for (const field of owned) {
    if (options?.[field] !== undefined)
      return yield* new InvalidArgument({
        field,
        message: `${field} cannot be combined with keepLast: keep-last decides when the task runs and which one does`
      })
  }
  const withHeader: EnqueueOptions = {
    ...options,
    headers: { ...options?.headers, [keepLastHeader]: keepLast.key }
  }
  const prepared = prepareEnqueue(task, payload, withHeader, nowMs, yield* currentTraceHeaders)
  if (Result.isFailure(prepared)) return yield* prepared.failure
  const p = prepared.success
  const msg = p.write.msg
  const maxWaitMs = maxWait ?? Math.max(defaultMaxWaitMs, msg.timeout * 1000)
  yield* ensureQueueRegistered(msg.queue, nowMs)
  const outcome = yield* runScript(enqueueKeepLastScript, {
    msg,
    nowMs,
    key: keepLast.key,
    latestStartMs: nowMs + maxWaitMs,
    keyTtlMs: maxWaitMs + keyMarginMs
  })
  const info = p.info(outcome.waiting ? "scheduled" : "pending")
  return {
    info: outcome.waiting ? { ...info, nextProcessAt: new Date(nowMs + maxWaitMs) } : info,
    waiting: outcome.waiting,
    replaced: outcome.replaced
  } satisfies EnqueueKeepLastResult as EnqueueKeepLastResult
})
