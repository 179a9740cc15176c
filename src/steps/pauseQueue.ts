import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { pauseQueueScript, unpauseQueueScript } from "../broker/pauseQueue.js"
import { requireQueue } from "../broker/queues.js"
import { runScript } from "../broker/script.js"

/**
 * Pauses a queue (asynq's PauseQueue): dequeue skips it until `unpauseQueue`. QueueNotFound for a
 * queue not in `asynq:queues` (a typo must not look done), InvalidState when it is already paused.
 */
export const pauseQueue = Effect.fn("Steps.pauseQueue")(function* (queue: string) {
  yield* requireQueue(queue)
  const now = yield* Clock.currentTimeMillis
  yield* runScript(pauseQueueScript, { queue, nowMs: now })
})

/** Resumes a paused queue (asynq's UnpauseQueue). QueueNotFound, or InvalidState when it is not paused. */
export const unpauseQueue = Effect.fn("Steps.unpauseQueue")(function* (queue: string) {
  yield* requireQueue(queue)
  yield* runScript(unpauseQueueScript, { queue })
})
