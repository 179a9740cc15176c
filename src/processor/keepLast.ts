/**
 * Keep-last-while-active on the worker's side: when a task carrying a keep-last key (the header
 * `effect-asynq-keep-last`, written by `Steps.enqueueKeepLast`) has finished — completed, archived
 * or dropped, not when it goes back for a retry — the worker that settled it releases the key's
 * waiting task (lua/keepLastRelease.lua: it becomes pending and the key's current task). Tasks
 * without the header cost one property lookup.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { Broker } from "../broker/Broker.js"
import { keepLastHeader, keepLastReleaseScript } from "../broker/enqueueKeepLast.js"
import { runScript } from "../broker/script.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { Settled } from "./settle.js"

/** The outcomes after which a task has finished for good (its keep-last key can move on). */
const finished: ReadonlySet<Settled> = new Set<Settled>(["completed", "archived", "revoked"])

const backoff = Schedule.exponential(Duration.millis(50), 2).pipe(Schedule.jittered)

/**
 * After `outcome`, releases the keep-last key of `msg` (if it has one and finished). A release that
 * fails (Redis down) is tried three more times, then logged: the key's next enqueue finds the
 * finished task and frees the key, and the waiting task still starts at its latest start.
 */
export const releaseKeepLast = (msg: TaskMessage, outcome: Settled): Effect.Effect<void, never, Broker> => {
  const key = msg.headers[keepLastHeader]
  if (key === undefined || !finished.has(outcome)) return Effect.void
  return Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    runScript(keepLastReleaseScript, { queue: msg.queue, key, id: msg.id, nowMs })
  ).pipe(
    Effect.retry({ schedule: backoff, times: 3 }),
    Effect.timeout(Duration.seconds(10)),
    Effect.catch((e) =>
      Effect.logWarning(
        `task ${msg.id}: could not release the waiting task of keep-last key ${JSON.stringify(key)} (the key's next enqueue or the waiting task's latest start will): ${e.message}`
      )
    ),
    Effect.asVoid
  )
}
