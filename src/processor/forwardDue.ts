/**
 * A time-boxed drain's forwarding (`DrainConfig.forwardDue`): when its queues have nothing pending,
 * one forward pass moves their scheduled and retry tasks that are due; with a wait, when none is
 * due yet, it sleeps until the earliest one that comes due within the wait (and before `stopAtMs`,
 * where the drain stops taking tasks) and forwards it on its millisecond.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import { forwardPass } from "./forwarder.js"

/** Most tasks one forward pass of a drain moves per queue. */
const drainForwardBatch = 100

/**
 * Whether the drain should look for pending tasks again: true when the pass moved some (now, or
 * after waiting for the earliest due one); false when there is nothing to forward before the stop
 * (or forwarding is off, or the pass failed: logged, and the drain ends as it would have).
 */
export const forwardDueOnEmpty = (
  queues: ReadonlyArray<string>,
  setting: boolean | { readonly waitMs: number } | undefined,
  stopAtMs: number
): Effect.Effect<boolean, never, Broker> => {
  if (setting === undefined || setting === false) return Effect.succeed(false)
  const waitMs = setting === true ? 0 : Math.max(0, setting.waitMs)
  const pass = forwardPass({ queues, rounds: "one", batch: drainForwardBatch })
  return Effect.gen(function* () {
    const first = yield* pass
    if (first.moved > 0) return true
    const now = yield* Clock.currentTimeMillis
    const due = first.nextDueAtMs
    if (due === undefined || due > now + waitMs || due > stopAtMs) return false
    yield* Effect.sleep(Duration.millis(Math.max(0, due - now)))
    return (yield* pass).moved > 0
  }).pipe(Effect.catch((e) => Effect.as(Effect.logWarning(`drain: forwarding due tasks failed: ${e.message}`), false)))
}
