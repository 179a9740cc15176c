/**
 * Forwarder (asynq's, every DelayedTaskCheckInterval, default 5 s): moves due scheduled and retry
 * tasks to pending, a batch at a time until none is left, then wakes the local fetcher and
 * publishes a wake-up for the queues that got tasks.
 */
import { Effect } from "effect"
import { forward } from "../steps/forward.js"
import { periodic } from "./periodic.js"
import type { Signal } from "./Signal.js"
import { publishWake } from "./wake.js"

export const forwardOnce = Effect.fn("Processor.forwardOnce")(function* (queues: ReadonlyArray<string>, wake: Signal) {
  let pending = queues
  let moved = 0
  const touched = new Set<string>()
  while (pending.length > 0) {
    const r = yield* forward({ queues: pending })
    moved += r.moved
    for (const [q, n] of Object.entries(r.byQueue)) if (n > 0) touched.add(q)
    pending = r.more
  }
  if (touched.size > 0) {
    wake.raise()
    yield* publishWake([...touched])
  }
  return moved
})

export const forwarderLoop = (queues: ReadonlyArray<string>, wake: Signal, intervalMs: number) =>
  periodic("forwarder", intervalMs, forwardOnce(queues, wake))
