/** Janitor (asynq's, every 8 s): deletes completed tasks whose retention ended, 100 per queue per call until none is left. */
import { Effect } from "effect"
import { janitor } from "../steps/janitor.js"
import { periodic } from "./periodic.js"

const batch = 100

export const janitorOnce = Effect.fn("Processor.janitorOnce")(function* (queues: ReadonlyArray<string>) {
  let pending = queues
  let deleted = 0
  while (pending.length > 0) {
    const r = yield* janitor({ queues: pending, batch })
    deleted += r.deleted
    pending = pending.filter((q) => (r.byQueue[q] ?? 0) >= batch)
  }
  return deleted
})

export const janitorLoop = (queues: ReadonlyArray<string>, intervalMs: number) => periodic("janitor", intervalMs, janitorOnce(queues))
