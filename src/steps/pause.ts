import { Clock, Effect } from "effect"
import { pauseScript, unpauseScript } from "../broker/pause.js"
import { runScript } from "../broker/script.js"

/** Pauses a queue: dequeue skips it until unpause. InvalidState when it is already paused. */
export const pause = Effect.fn("Steps.pause")(function* (queue: string) {
  const now = yield* Clock.currentTimeMillis
  yield* runScript(pauseScript, { queue, nowMs: now })
})

/** Resumes a paused queue. InvalidState when it is not paused. */
export const unpause = Effect.fn("Steps.unpause")(function* (queue: string) {
  yield* runScript(unpauseScript, { queue })
})
