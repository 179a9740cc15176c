import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import { forward } from "../../src/steps/forward.js"
import { janitor } from "../../src/steps/janitor.js"
import { recover } from "../../src/steps/recover.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"
import { aggregateGroups, type AggregateSummary, type AggregationConfig } from "./aggregateGroups.js"

export interface MaintenanceConfig {
  readonly queues: ReadonlyArray<string>
  /** Most tasks each step moves per queue in one tick (default 100): a tick's work is bounded. */
  readonly batch?: number
  /** Group aggregation (omit when no queue uses groups). */
  readonly aggregation?: AggregationConfig
  /** Retry delay for tasks whose lease expired (default asynq's). */
  readonly retryDelayMs?: (msg: TaskMessage) => number
  /**
   * More periodic work to run in the same tick (e.g. a scheduler tick), reported under `extra`; the
   * `errors` of its summary, if it has any, are listed in the tick's `errors` too.
   */
  readonly extra?: Effect.Effect<unknown, unknown, Broker>
}

/** What one tick did. Each part runs even when another failed; failures are listed in `errors`. */
export interface TickSummary {
  readonly forwarded: { readonly moved: number; readonly byQueue: Readonly<Record<string, number>>; readonly more: ReadonlyArray<string> } | null
  readonly recovered: { readonly retried: number; readonly archived: number; readonly corrupt: number } | null
  readonly aggregated: AggregateSummary | null
  readonly janitor: { readonly deleted: number } | null
  readonly extra: unknown
  readonly errors: ReadonlyArray<{ readonly step: string; readonly message: string }>
}

/** The messages of an `errors` array in a step's summary, if it has one. */
const errorsIn = (summary: unknown): ReadonlyArray<string> => {
  const list = typeof summary === "object" && summary !== null ? (summary as { errors?: unknown }).errors : undefined
  return Array.isArray(list) ? list.map((e) => messageOf(e)) : []
}

const messageOf = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/**
 * One maintenance tick: forward due scheduled/retry tasks, recover expired leases, aggregate
 * ready groups, delete expired completed tasks. Every move is one atomic script, so two ticks
 * that overlap never move a task twice.
 */
export const maintenanceTick = Effect.fn("Adapters.maintenanceTick")(function* (config: MaintenanceConfig) {
  const errors: Array<{ step: string; message: string }> = []
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
  const forwarded = yield* part("forward", forward({ queues, batch }))
  const recovered = yield* part(
    "recover",
    recover({ queues, batch, ...(config.retryDelayMs ? { retryDelayMs: config.retryDelayMs } : {}) }).pipe(
      Effect.map((r) => ({ retried: r.retried, archived: r.archived, corrupt: r.corrupt.length }))
    )
  )
  const aggregated = config.aggregation
    ? yield* part("aggregate", aggregateGroups(queues, { maxGroups: batch, ...config.aggregation }))
    : null
  for (const f of aggregated?.failed ?? []) errors.push({ step: "aggregate", message: f.error })
  const cleaned = yield* part("janitor", janitor({ queues, batch }).pipe(Effect.map((r) => ({ deleted: r.deleted }))))
  const extra = config.extra ? yield* part("extra", config.extra) : null
  // A summary with its own `errors` (a scheduler tick's failed occurrences) fails the tick too.
  for (const e of errorsIn(extra)) errors.push({ step: "extra", message: e })
  const summary: TickSummary = { forwarded, recovered, aggregated, janitor: cleaned, extra, errors }
  return summary
})
