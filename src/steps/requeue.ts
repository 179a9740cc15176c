import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { requeueScript } from "../broker/requeue.js"
import { runScript } from "../broker/script.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

/**
 * Gives an active task back without running it (e.g. at shutdown): it goes to the head of
 * pending, so the next dequeue takes it. Fails with LeaseLost when the task is no longer active.
 * `atMs` (default now): the time recorded as pending_since; a caller sending the same requeue
 * again after a lost reply passes the same time, so the script recognises its own earlier move.
 */
export const requeue = Effect.fn("Steps.requeue")(function* (msg: TaskMessage, atMs?: number) {
  const now = atMs ?? (yield* Clock.currentTimeMillis)
  yield* runScript(requeueScript, { msg, nowMs: now })
})
