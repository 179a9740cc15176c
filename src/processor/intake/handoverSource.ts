/**
 * The hand-over: a task source fed by the receiver (pushReceiver.ts), whose state is the parking
 * state (parking.ts). Its two ways into the intake: straight from the receiver's callback while the
 * fetch loop waits idle with a slot free (`handoverIntake`: no wake-up of the loop and no Effect
 * steps before the attempt's fiber; a park has room for as many tasks as its fetch left slots
 * free, and only when that is used up is the loop woken, to park again, off that task's path);
 * otherwise through the loop (`takeHandovers`), as slots.ts decides each one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../broker/Broker.js"
import type { LeasedTask } from "../../steps/dequeueLease.js"
import type { HandoverIntake, ParkingState } from "../parking.js"
import type { Signal } from "../Signal.js"
import type { StartLeased } from "./fetchSource.js"
import { pushDecider, type Slots, startsDirect } from "./slots.js"

/** What the intake gives the parking state when it is made. */
export const handoverIntake = (deps: {
  readonly slots: Slots
  readonly wake: Signal
  /** The loop's own slot signal. */
  readonly slotFreed: Signal
  readonly clock: Clock.Clock
  /** Registers a leased task and forks its attempt into the attempts set (start.ts). */
  readonly startOne: (task: LeasedTask, nowMs: number) => void
}): HandoverIntake => ({
  raise: () => {
    deps.wake.raise()
    deps.slotFreed.raise()
  },
  nowMs: () => deps.clock.currentTimeMillisUnsafe(),
  startsNow: () => startsDirect(deps.slots),
  start: (task) => deps.startOne(task, deps.clock.currentTimeMillisUnsafe()),
  repark: () => deps.wake.raise()
})

/**
 * Starts the tasks handed over while parked, as many as slots are free. With none free while a
 * ride is in flight (it holds the slots it may fill: a push found this worker parked, so that
 * ride most likely comes back short), the others wait for it to land (the ride wakes the loop);
 * otherwise they go back to pending. A waiting push is leased to this worker but not yet
 * registered (its lease is not extended): it waits at most `maxPushWaitMs` (parking.ts).
 */
export const takeHandovers = <R>(
  parking: ParkingState,
  slots: Slots,
  start: StartLeased<R>
): Effect.Effect<unknown, never, R | Broker> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => parking.settle(pushDecider(slots), now)).pipe(
    Effect.flatMap(
      (got): Effect.Effect<unknown, never, R | Broker> =>
        got.tasks.length + got.corrupt.length + got.failedQueues.length === 0 ? Effect.void : start(got)
    ),
    Effect.uninterruptible
  )
