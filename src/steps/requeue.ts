import { Clock, Effect } from "effect"
import { requeueScript } from "../broker/requeue.js"
import { runScript } from "../broker/script.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

/**
 * Gives an active task back without running it (e.g. at shutdown): it goes to the head of
 * pending, so the next dequeue takes it. Fails with LeaseLost when the task is no longer active.
 */
export const requeue = Effect.fn("Steps.requeue")(function* (msg: TaskMessage) {
  const now = yield* Clock.currentTimeMillis
  yield* runScript(requeueScript, { msg, nowMs: now })
})
