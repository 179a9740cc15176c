/** Server options, asynq's Config with its defaults, validated once at start (InvalidArgument naming the option). */
import { availableParallelism, hostname } from "node:os"
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { MetricsOptions } from "../observability/metricsEndpoint.js"
import type { Observer } from "./observer.js"
import type { Task } from "./Task.js"

import type { GroupAggregator } from "../steps/aggregate.js"
export type { AggregatedTask, GroupAggregator } from "../steps/aggregate.js"

/** Delay before retry number `retried + 1` (ms). */
export type RetryDelayFn = (retried: number, error: unknown, task: Task) => number

/** The Server's options, with asynq's defaults (see the worker guide's table). */
export interface ServerOptions {
  /** Tasks processed at the same time (default: the number of CPUs, as asynq). */
  readonly concurrency?: number
  /** Queue name → priority weight (default { default: 1 }); a weight <= 0 leaves the queue out. */
  readonly queues?: Readonly<Record<string, number>>
  /** Highest priority queue first until it is empty (default false: weighted random order). */
  readonly strictPriority?: boolean
  /** Retry delay (default asynq's n^4 + 15 + rand(30)·(n+1) seconds). */
  readonly retryDelay?: RetryDelayFn
  /** Whether a handler error counts as a failure (default: always). Not a failure: retried without counting. */
  readonly isFailure?: (error: unknown) => boolean
  /** Called for every failed attempt (before the retry/archive is written). */
  readonly errorHandler?: (task: Task, error: unknown) => void | Promise<void>
  /** Called after every health check: undefined when Redis answered PING, else the error. */
  readonly healthCheck?: (error: unknown) => void
  readonly healthCheckIntervalMs?: number
  /** How long shutdown waits for running tasks before requeueing them (default 8000). */
  readonly shutdownTimeoutMs?: number
  /**
   * The longest the forwarder sleeps between two looks at the scheduled and retry tasks (default
   * 5000). It sleeps until the earliest due time of its queues, and a task written by effect-asynq
   * that is due earlier wakes it, so tasks are moved on their millisecond; this bounds how late a
   * task written by Go asynq (which announces nothing) or a missed announcement is seen.
   */
  readonly delayedTaskCheckIntervalMs?: number
  /** Group aggregation (off without an aggregator). Grace period default 60 s, at least 1 s. */
  readonly groupAggregator?: GroupAggregator
  readonly groupGracePeriodMs?: number
  readonly groupMaxDelayMs?: number
  readonly groupMaxSize?: number
  /** How often groups are checked (default 7000, asynq's; never more than the grace period). */
  readonly groupCheckIntervalMs?: number
  /** Deleting completed tasks past their retention (default 8000). */
  readonly janitorIntervalMs?: number
  /**
   * Taking back tasks whose lease expired: once at start, then when the earliest lease (+
   * `leaseGraceMs`) of the server's queues runs out, at most this long apart (default 60000,
   * asynq's period) and at least 1 s apart.
   */
  readonly recovererIntervalMs?: number
  /** A lease counts as expired this long after it ran out (default 30000, for clock skew). */
  readonly leaseGraceMs?: number
  /** Lease on each running task (default 30000), extended every `heartbeatIntervalMs`. */
  readonly leaseMs?: number
  /** Lease extension and server state in asynq:servers / asynq:workers (default 5000). */
  readonly heartbeatIntervalMs?: number
  /** With no wake-up signal, look for tasks this often anyway (default 1000): bounds the pickup delay of tasks enqueued by Go asynq clients. */
  readonly pollIntervalMs?: number
  /** At most this many tasks per fetch round trip (default min(concurrency, 100)). */
  readonly fetchBatchSize?: number
  /** Called after each attempt's outcome was written (or given up): "completed", "retried", "archived", … */
  readonly onSettled?: (task: TaskMessage, outcome: string) => void
  /**
   * Worker metrics (Effect Metric, in the context's MetricRegistry; src/observability/workerMetrics.ts):
   * `true` records them; `{ port }` also serves them as Prometheus text at http://host:port/metrics
   * while the server runs. Off by default (no per-task work). Spans per attempt need no option:
   * they are made when a tracer is installed (e.g. effect/observability's OtlpTracer layer).
   */
  readonly metrics?: boolean | MetricsOptions
  /** Identity in asynq:servers (defaults: os hostname, process pid, a random uuid). */
  readonly host?: string
  readonly pid?: number
  readonly serverId?: string
}

export interface ResolvedOptions {
  readonly concurrency: number
  readonly queues: Readonly<Record<string, number>>
  readonly queueNames: ReadonlyArray<string>
  readonly strictPriority: boolean
  readonly retryDelay: RetryDelayFn | undefined
  readonly isFailure: (error: unknown) => boolean
  readonly errorHandler: ((task: Task, error: unknown) => void | Promise<void>) | undefined
  readonly healthCheck: ((error: unknown) => void) | undefined
  readonly healthCheckIntervalMs: number
  readonly shutdownTimeoutMs: number
  readonly delayedTaskCheckIntervalMs: number
  readonly groupAggregator: GroupAggregator | undefined
  readonly groupGracePeriodMs: number
  readonly groupMaxDelayMs: number
  readonly groupMaxSize: number
  readonly groupCheckIntervalMs: number
  readonly janitorIntervalMs: number
  readonly recovererIntervalMs: number
  readonly leaseGraceMs: number
  readonly leaseMs: number
  readonly heartbeatIntervalMs: number
  readonly pollIntervalMs: number
  readonly fetchBatchSize: number
  readonly onSettled: ((task: TaskMessage, outcome: string) => void) | undefined
  /** Metrics and spans (set when the Server or drain starts with metrics on or a tracer installed); undefined: no observability work. */
  readonly observer?: Observer | undefined
  readonly host: string
  readonly pid: number
  readonly serverId: string
}

const fail = (field: string, message: string) => Effect.fail(new InvalidArgument({ field, message }))

const ms = (field: string, value: number | undefined, dflt: number, min: number) =>
  value === undefined
    ? Effect.succeed(dflt)
    : Number.isFinite(value) && value >= min
      ? Effect.succeed(value)
      : fail(field, `${field} must be a number of milliseconds >= ${min}, got ${value}`)

const whole = (field: string, value: number | undefined, dflt: number, min: number) =>
  value === undefined
    ? Effect.succeed(dflt)
    : Number.isInteger(value) && value >= min
      ? Effect.succeed(value)
      : fail(field, `${field} must be a whole number >= ${min}, got ${value}`)

/** Options with asynq's defaults filled in; InvalidArgument for a value asynq would reject or that makes no sense. */
export const resolveOptions = Effect.fn("Processor.resolveOptions")(function* (o: ServerOptions = {}) {
  const concurrency = yield* whole("concurrency", o.concurrency, availableParallelism(), 1)
  const queues: Record<string, number> = {}
  for (const [name, weight] of Object.entries(o.queues ?? { default: 1 })) {
    if (name.trim() === "") return yield* fail("queues", "queue names must be non-empty")
    if (!Number.isInteger(weight))
      return yield* fail("queues", `the weight of queue "${name}" must be a whole number, got ${weight}`)
    if (weight > 0) queues[name] = weight
  }
  const queueNames = Object.keys(queues)
  if (queueNames.length === 0) return yield* fail("queues", "no queue with a weight > 0 to process")
  const leaseMs = yield* ms("leaseMs", o.leaseMs, 30_000, 1000)
  const heartbeatIntervalMs = yield* ms("heartbeatIntervalMs", o.heartbeatIntervalMs, Math.min(5000, leaseMs / 3), 10)
  if (heartbeatIntervalMs >= leaseMs)
    return yield* fail(
      "heartbeatIntervalMs",
      `heartbeatIntervalMs (${heartbeatIntervalMs}) must be shorter than leaseMs (${leaseMs})`
    )
  const groupGracePeriodMs = yield* ms("groupGracePeriodMs", o.groupGracePeriodMs, 60_000, 1000)
  const fetchBatchSize = yield* whole("fetchBatchSize", o.fetchBatchSize, Math.min(concurrency, 100), 1)
  return {
    concurrency,
    queues,
    queueNames,
    strictPriority: o.strictPriority ?? false,
    retryDelay: o.retryDelay,
    isFailure: o.isFailure ?? (() => true),
    errorHandler: o.errorHandler,
    healthCheck: o.healthCheck,
    healthCheckIntervalMs: yield* ms("healthCheckIntervalMs", o.healthCheckIntervalMs, 15_000, 10),
    shutdownTimeoutMs: yield* ms("shutdownTimeoutMs", o.shutdownTimeoutMs, 8000, 0),
    delayedTaskCheckIntervalMs: yield* ms("delayedTaskCheckIntervalMs", o.delayedTaskCheckIntervalMs, 5000, 10),
    groupAggregator: o.groupAggregator,
    groupGracePeriodMs,
    groupMaxDelayMs: yield* ms("groupMaxDelayMs", o.groupMaxDelayMs, 0, 0),
    groupMaxSize: yield* whole("groupMaxSize", o.groupMaxSize, 0, 0),
    groupCheckIntervalMs: yield* ms(
      "groupCheckIntervalMs",
      o.groupCheckIntervalMs,
      Math.min(7000, groupGracePeriodMs),
      10
    ),
    janitorIntervalMs: yield* ms("janitorIntervalMs", o.janitorIntervalMs, 8000, 10),
    recovererIntervalMs: yield* ms("recovererIntervalMs", o.recovererIntervalMs, 60_000, 10),
    leaseGraceMs: yield* ms("leaseGraceMs", o.leaseGraceMs, 30_000, 0),
    leaseMs,
    heartbeatIntervalMs,
    pollIntervalMs: yield* ms("pollIntervalMs", o.pollIntervalMs, 1000, 10),
    fetchBatchSize,
    onSettled: o.onSettled,
    host: o.host ?? hostname(),
    pid: yield* whole("pid", o.pid, process.pid, 0),
    serverId: o.serverId ?? randomUUID()
  } satisfies ResolvedOptions as ResolvedOptions
})
