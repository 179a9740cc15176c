/**
 * The maintenance tick, run once per invocation (a cron-triggered function): one bounded pass of
 * each of the Server's background jobs — forward, recover, aggregate, janitor — plus any `extra`
 * work, each reported on its own; a queue a part could not serve is listed in `errors` with its
 * name, and the part goes on with the other queues. Every move is one atomic script, so two ticks
 * that overlap never move a task twice.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { aggregatePass, type AggregateSummary, type AggregationConfig } from "./aggregator.js"
import { forwardPass, type ForwardSummary, forwardUntil, forwardedThen } from "./forwarder.js"
import { janitorPass, type JanitorSummary } from "./janitor.js"
import { recoverPass, type RecoverSummary } from "./recoverer.js"

/** Settings of a maintenance tick: the queues, the batch per step, aggregation and an `extra` Effect run after the steps. */
export interface MaintenanceConfig {
  readonly queues: ReadonlyArray<string>
  /** Most tasks each step moves per queue in one tick (default 100): a tick's work is bounded. */
  readonly batch?: number
  /** Group aggregation (omit when no queue uses groups); `maxGroups` defaults to `batch`. */
  readonly aggregation?: AggregationConfig
  /** Retry delay for tasks whose lease expired (default asynq's). */
  readonly retryDelayMs?: (msg: TaskMessage) => number
  /**
   * More periodic work to run in the same tick (e.g. a scheduler tick), reported under `extra`; the
   * `errors` of its summary, if it has any, are listed in the tick's `errors` too.
   */
  readonly extra?: Effect.Effect<unknown, unknown, Broker>
  /**
   * Stay up after the passes and forward scheduled and retry tasks on time until this moment (unix
   * ms, on Effect's Clock): the tick sleeps until the earliest due task of its queues (at most
   * `forwardIntervalMs`) and moves it to pending then, instead of leaving it for the next tick. For a
   * function run every minute that may take most of that minute. Default: no stay.
   */
  readonly forwardUntilMs?: number
  /**
   * While staying (`forwardUntilMs`), the longest sleep between two looks (default 1000 ms): a task
   * written meanwhile and due before the next look is moved at most this late.
   */
  readonly forwardIntervalMs?: number
}

/** What one tick did. Each part runs even when another failed; failures are listed in `errors`. */
export interface TickSummary {
  readonly forwarded: ForwardSummary | null
  readonly recovered: RecoverSummary | null
  readonly aggregated: AggregateSummary | null
  readonly janitor: JanitorSummary | null
  readonly extra: unknown
  /** Failures: a whole part (`step`), or one queue of a part (`queue` set; the part's other queues went on). */
  readonly errors: ReadonlyArray<{ readonly step: string; readonly message: string; readonly queue?: string }>
}

/** The messages of an `errors` array in a step's summary, if it has one. */
const errorsIn = (summary: unknown): ReadonlyArray<string> => {
  const list = typeof summary === "object" && summary !== null ? (summary as { errors?: unknown }).errors : undefined
  return Array.isArray(list) ? list.map((e) => messageOf(e)) : []
}

const messageOf = (e: unknown): string =>
  e instanceof Error
    ? e.message
    : typeof e === "object" && e !== null && "message" in e
      ? String((e as { message: unknown }).message)
      : String(e)

/** While a tick stays to forward on time, the longest sleep between two looks. */
export const defaultForwardIntervalMs = 1000

/** One maintenance tick: forward due scheduled/retry tasks, recover expired leases, aggregate ready groups, delete expired completed tasks. */
export const maintenanceTick = Effect.fn("Processor.maintenanceTick")(function* (config: MaintenanceConfig) {
  const errors: Array<{ step: string; message: string; queue?: string }> = []
  const queueErrors = (step: string, summary: { readonly failedQueues: ReadonlyArray<QueueFailure> } | null) => {
    for (const f of summary?.failedQueues ?? [])
      errors.push({ step, queue: f.queue, message: `queue "${f.queue}": ${f.error}` })
  }
  const part = <A>(step: string, eff: Effect.Effect<A, unknown, Broker>) =>
    eff.pipe(
      Effect.catchCause((cause) =>
        Effect.sync(() => {
          errors.push({ step, message: messageOf(Cause.squash(cause)) })
          return null
        })
      )
    )
  const batch = config.batch ?? 100
  const { queues } = config
  const forwarded = yield* part("forward", forwardPass({ queues, batch, rounds: "one" }))
  queueErrors("forward", forwarded)
  const recovered = yield* part(
    "recover",
    recoverPass({ queues, batch, ...(config.retryDelayMs ? { retryDelayMs: config.retryDelayMs } : {}) })
  )
  queueErrors("recover", recovered)
  const aggregated = config.aggregation
    ? yield* part("aggregate", aggregatePass({ queues, maxGroups: batch, ...config.aggregation }))
    : null
  queueErrors("aggregate", aggregated)
  for (const f of aggregated?.failed ?? []) errors.push({ step: "aggregate", message: f.error })
  const cleaned = yield* part("janitor", janitorPass({ queues, batch, rounds: "one" }))
  queueErrors("janitor", cleaned)
  const extra = config.extra ? yield* part("extra", config.extra) : null
  const stayed =
    config.forwardUntilMs === undefined
      ? null
      : yield* part(
          "forward",
          forwardUntil({
            queues,
            batch,
            untilMs: config.forwardUntilMs,
            intervalMs: config.forwardIntervalMs ?? defaultForwardIntervalMs,
            nextDueAtMs: forwarded?.nextDueAtMs
          })
        )
  queueErrors("forward", stayed)
  // A summary with its own `errors` (a scheduler tick's failed occurrences) fails the tick too.
  for (const e of errorsIn(extra)) errors.push({ step: "extra", message: e })
  const summary: TickSummary = {
    forwarded: stayed === null ? forwarded : forwarded === null ? stayed : forwardedThen(forwarded, stayed),
    recovered,
    aggregated,
    janitor: cleaned,
    extra,
    errors
  }
  return summary
})
