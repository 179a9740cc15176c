/**
 * Deleting completed tasks whose retention ended: the janitor pass (what the Server's janitor and
 * the maintenance tick run) and the Server's janitor loop (asynq's, every 8 s), which deletes 100
 * per queue per call until none is left.
 */
import * as Effect from "effect/Effect"
import { janitor } from "../steps/janitor.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import { logQueueFailures, periodic } from "./periodic.js"

export interface JanitorPassOptions {
  readonly queues: ReadonlyArray<string>
  /** Most tasks deleted per queue per call of the step (default 100). */
  readonly batch?: number
  /** "one": one call of the step (a tick's bounded work); "all": call again while a queue may have more. */
  readonly rounds: "one" | "all"
}

/** What one janitor pass did. */
export interface JanitorSummary {
  readonly deleted: number
  /** Queues that failed (in any round): the others were cleaned. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

export const janitorPass = Effect.fn("Processor.janitorPass")(function* (options: JanitorPassOptions) {
  const batch = options.batch ?? 100
  let pending = options.queues
  let deleted = 0
  const failedQueues: Array<QueueFailure> = []
  for (;;) {
    const r = yield* janitor({ queues: pending, batch })
    deleted += r.deleted
    failedQueues.push(...r.failedQueues)
    pending = pending.filter((q) => (r.byQueue[q] ?? 0) >= batch)
    if (options.rounds === "one" || pending.length === 0) break
  }
  return { deleted, failedQueues } satisfies JanitorSummary as JanitorSummary
})

export const janitorLoop = (queues: ReadonlyArray<string>, intervalMs: number) =>
  periodic(
    "janitor",
    intervalMs,
    janitorPass({ queues, rounds: "all" }).pipe(
      Effect.tap((r) => logQueueFailures("deleting expired completed tasks", r.failedQueues))
    )
  )
