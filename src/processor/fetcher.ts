/**
 * The Server's fetch loop, over its intake (intake/intake.ts: sources → intake → attempts): while
 * fewer than `concurrency` tasks run, take up to the free slots (at most `fetchBatchSize`) in one
 * round trip, in the queue order of this round (intake/fetchSource.ts). When a fetch comes back
 * short (the queues are empty), wait idle for a wake-up or the poll interval; when all slots are
 * busy, wait for a slot. Meanwhile the other sources feed the same slots: the ride on a batch of
 * completions (intake/rideSource.ts) while the loop is not idle, and the hand-overs to this worker
 * (intake/handoverSource.ts), straight from the receiver while the loop waits idle and taken here
 * otherwise. Which source feeds a free slot is decided in one place: intake/slots.ts.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import type { LoopIntake } from "./intake/intake.js"
import { fetchWant } from "./intake/slots.js"

/** The fetch loop: runs until interrupted (the Server's `stop`); then leaves the queues it parked on. */
export const fetchLoop = <R>(intake: LoopIntake<R>): Effect.Effect<never, never, R | Broker> =>
  Effect.gen(function* () {
    const { slots, parking, fetch } = intake
    const { slotFreed } = intake.settings
    const { fetchBatchSize } = intake.deps.options
    const running = intake.deps.registry.tasks
    // Rides go while the loop runs (until its end, after it left the queues it parked on).
    slots.taking = true
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        slots.taking = false
      })
    )
    if (parking) yield* Effect.addFinalizer(() => Effect.flatMap(Clock.currentTimeMillis, parking.leave))
    for (;;) {
      slotFreed.clear()
      if (intake.takeHandovers && parking!.pending()) yield* intake.takeHandovers
      const free = slots.free()
      if (free <= 0) {
        yield* slotFreed.wait()
        continue
      }
      // Let other finished tasks settle first, so one round trip takes several tasks.
      if (free < fetchBatchSize && running.size > 0) yield* Effect.yieldNow
      const want = fetchWant(slots, fetchBatchSize)
      if (want <= 0) continue
      slots.fetching = want
      const short = yield* fetch.fetch(want).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            slots.fetching = 0
          })
        )
      )
      if (short) {
        // Idle: no ride goes (it would find the queues empty too), and a hand-over with a free slot
        // starts straight from the receiver (slots.ts).
        slots.idle = true
        yield* fetch.untilNextLook.pipe(
          Effect.ensuring(
            Effect.sync(() => {
              slots.idle = false
            })
          )
        )
      }
    }
  }).pipe(Effect.scoped) as Effect.Effect<never, never, R | Broker>
