/**
 * The processor's one instrumentation hook (metrics and attempt spans: workerObserver.ts). Made
 * once when a Server or drain starts, and only when metrics are asked for or a tracer is
 * installed; without one (the default) the processor does no per-task observability work.
 */
import type { Effect } from "effect"
import type { Handler } from "./Handler.js"
import type { ActiveTask } from "./registry.js"
import type { Settled } from "./settle.js"

export interface Observer {
  /** Wraps the handler once, when the processor starts (sees how each handler run ended). */
  readonly handler: <R>(handler: Handler<R>) => Handler<R>
  /** Wraps one attempt (its handler run and the outcome write); sees the outcome. */
  readonly attempt: <R>(
    entry: ActiveTask,
    attempt: Effect.Effect<Settled, never, R>
  ) => Effect.Effect<Settled, never, R>
  /** After each fetch round trip: how many tasks it leased (0 for an empty fetch). */
  readonly fetched: (count: number) => void
  /** After each lease extension call: how many leases in `queue` were extended. */
  readonly leasesExtended: (queue: string, count: number) => void
}
