import { Clock, Effect } from "effect"
import { pauseQueue, unpauseQueue } from "../broker/pause.js"

/** Pauses a queue: dequeue skips it until unpause. InvalidState when it is already paused. */
export const pause = Effect.fn("Steps.pause")(function* (queue: string) {
  const now = yield* Clock.currentTimeMillis
  yield* pauseQueue(queue, now)
})

/** Resumes a paused queue. InvalidState when it is not paused. */
export const unpause = Effect.fn("Steps.unpause")(function* (queue: string) {
  yield* unpauseQueue(queue)
})
