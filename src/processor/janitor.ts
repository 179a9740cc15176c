/**
 * Deleting completed tasks whose retention ended: the janitor pass (what the Server's janitor and
 * the maintenance tick run) and the Server's janitor loop (asynq's, every 8 s), which deletes 100
 * per queue per call until none is left.
 */
import { Effect } from "effect"
import { janitor } from "../steps/janitor.js"
import { periodic } from "./periodic.js"

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
}

export const janitorPass = Effect.fn("Processor.janitorPass")(function* (options: JanitorPassOptions) {
  const batch = options.batch ?? 100
  let pending = options.queues
  let deleted = 0
  for (;;) {
    const r = yield* janitor({ queues: pending, batch })
    deleted += r.deleted
    pending = pending.filter((q) => (r.byQueue[q] ?? 0) >= batch)
    if (options.rounds === "one" || pending.length === 0) break
  }
  return { deleted } satisfies JanitorSummary as JanitorSummary
})

export const janitorLoop = (queues: ReadonlyArray<string>, intervalMs: number) => periodic("janitor", intervalMs, janitorPass({ queues, rounds: "all" }))
