/**
 * Forwarding due scheduled and retry tasks to pending: the forward pass (what the Server's
 * forwarder and the maintenance tick run) and the Server's forwarder loop (asynq's, every
 * DelayedTaskCheckInterval, default 5 s), which forwards until none is left, then wakes the local
 * fetcher and publishes a wake-up for the queues that got tasks.
 */
import * as Effect from "effect/Effect"
import { forward } from "../steps/forward.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import { logQueueFailures, periodic } from "./periodic.js"
import type { Signal } from "./Signal.js"
import { publishWake } from "./wake.js"

export interface ForwardPassOptions {
  readonly queues: ReadonlyArray<string>
  /** Most tasks moved per queue per call of the step (default 100). */
  readonly batch?: number
  /** "one": one call of the step (a tick's bounded work); "all": call again while a queue may have more due. */
  readonly rounds: "one" | "all"
  /** When given: raised, and a wake-up published for the queues that got tasks, once tasks were moved. */
  readonly wake?: Signal
}

/** What one forward pass did. */
export interface ForwardSummary {
  readonly moved: number
  readonly byQueue: Readonly<Record<string, number>>
  /** Queues that may still have due tasks (empty after `rounds: "all"`). */
  readonly more: ReadonlyArray<string>
  /** Queues that failed (in any round): the others were forwarded. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

export const forwardPass = Effect.fn("Processor.forwardPass")(function* (options: ForwardPassOptions) {
  let pending = options.queues
  let moved = 0
  const byQueue: Record<string, number> = {}
  const failedQueues: Array<QueueFailure> = []
  for (;;) {
    const r = yield* forward({ queues: pending, ...(options.batch !== undefined ? { batch: options.batch } : {}) })
    moved += r.moved
    failedQueues.push(...r.failedQueues)
    for (const [q, n] of Object.entries(r.byQueue)) byQueue[q] = (byQueue[q] ?? 0) + n
    pending = r.more
    if (options.rounds === "one" || pending.length === 0) break
  }
  const touched = Object.keys(byQueue).filter((q) => byQueue[q]! > 0)
  if (options.wake && touched.length > 0) {
    options.wake.raise()
    yield* publishWake(touched)
  }
  return { moved, byQueue, more: pending, failedQueues } satisfies ForwardSummary as ForwardSummary
})

export const forwarderLoop = (queues: ReadonlyArray<string>, wake: Signal, intervalMs: number) =>
  periodic("forwarder", intervalMs, forwardPass({ queues, rounds: "all", wake }).pipe(Effect.tap((r) => logQueueFailures("forwarding", r.failedQueues))))
