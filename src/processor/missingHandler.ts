/**
 * The warning for tasks no handler is registered for (HandlerNotFound): said at Warning level, so a
 * worker at its default level shows it, but once per task type and queue per interval, not once per
 * task (a queue full of them would flood the log). Time comes from Effect's Clock.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { TaskMessage } from "../wire/TaskMessage.js"

/** How often the warning is repeated for one task type and queue while its tasks keep failing. */
export const missingHandlerWarningIntervalMs = 60_000

/** When each "queue\0type" was last warned about (unix ms), for this process. */
const lastWarnedMs = new Map<string, number>()

/**
 * Warns that no handler matches `msg.type` in `msg.queue` and says what happens to the task
 * (`fate`), unless that was said for the same type and queue less than the interval ago.
 */
export const warnMissingHandler = (msg: TaskMessage, fate: string): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
    const key = `${msg.queue}\u0000${msg.type}`
    const last = lastWarnedMs.get(key)
    if (last !== undefined && nowMs >= last && nowMs - last < missingHandlerWarningIntervalMs) return Effect.void
    if (lastWarnedMs.size >= 10_000) lastWarnedMs.clear()
    lastWarnedMs.set(key, nowMs)
    return Effect.logWarning(
      `no handler for task type "${msg.type}" in queue "${msg.queue}": its tasks fail with HandlerNotFound and ${fate}. ` +
        `Register a handler for the type (or a pattern that matches it), or stop sending it to this queue. ` +
        `(Said at most once every ${missingHandlerWarningIntervalMs / 1000} s per type and queue.)`
    )
  })
