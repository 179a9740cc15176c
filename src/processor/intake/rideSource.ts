/**
 * The ride: a task source whose dequeue goes out in the round trip of a batch of completions
 * (acker.ts asks it as each batch goes out), so finishing tasks and leasing the next ones cost one
 * round trip. It leases from the first queue of this round's order, for the slots free once the
 * batch's completions land (slots.ts decides how many, and whether to ride at all); whatever it
 * leaves (a short reply, other queues) the fetch loop fetches. Not only while the loop waits for a
 * slot: a task that ends before the loop is back waiting (a fast handler) still brings the next one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker, BrokerShape } from "../../broker/Broker.js"
import { dequeueLeaseCall } from "../../steps/dequeueLease.js"
import type { Ride, Rider } from "../acker.js"
import type { ResolvedOptions } from "../options.js"
import type { ParkingState } from "../parking.js"
import { queueOrder } from "../queueOrder.js"
import type { Signal } from "../Signal.js"
import type { StartLeased } from "./fetchSource.js"
import { rideWant, type Slots } from "./slots.js"

/** What rides run with. */
export interface RideSourceDeps<R> {
  readonly options: ResolvedOptions
  readonly broker: BrokerShape
  readonly slots: Slots
  readonly wake: Signal
  /** The loop's own slot signal (not the filtered one attempts raise). */
  readonly slotFreed: Signal
  /** The hand-overs, when the worker parks: one waiting for the slots a ride held is decided again when it lands. */
  readonly parking: ParkingState | undefined
  readonly start: StartLeased<R>
  /** The connection leases large messages with SORT (broker/leaseByIds.ts canLeaseByIds): so do rides, for a queue whose messages are large. */
  readonly byIds: boolean
}

/** The rider the acker asks as each batch goes out, with the number of tasks the batches in flight complete. */
export const makeRideSource =
  <R>(deps: RideSourceDeps<R>): Rider =>
  (acks) =>
    Effect.suspend(() => {
      const free = rideWant(deps.slots, acks, deps.options.fetchBatchSize)
      if (free <= 0) return Effect.undefined
      deps.slots.reserved += free
      return Effect.flatMap(queueOrder(deps.options.queues, deps.options.strictPriority), (order) => {
        // A queue whose message sizes this connection does not know yet: a few tasks only, as a
        // fetch's first look (MessageSizes.fetchCount); the fetch loop takes the rest.
        const n = deps.broker.messageSizes.fetchCount(order[0]!, free)
        deps.slots.reserved -= free - n
        // A queue of large messages is leased the large-message way (broker/leaseByIds.ts): the
        // lease and a SORT of the messages in a MULTI sent right after the batch's completions,
        // not in the batch's script call, which would copy them through Lua.
        const byIds = deps.byIds && deps.broker.messageSizes.large(order[0]!, n)
        return Effect.map(Clock.currentTimeMillis, (now): Ride => ride(deps, order[0]!, n, now, byIds))
      })
    })

/** A ride leasing up to `free` tasks of `queue`, whose slots stay reserved until its tasks are registered. */
const ride = <R>(deps: RideSourceDeps<R>, queue: string, free: number, now: number, byIds: boolean): Ride => {
  deps.wake.clear()
  const fetch = dequeueLeaseCall(queue, free, deps.options.leaseMs, now, {
    outagesAtSend: deps.broker.redis.connectionState().outages,
    sizes: deps.broker.messageSizes,
    byIds
  })
  return {
    call: fetch.call,
    lease: fetch.lease,
    land: (reply) =>
      Effect.suspend(() => {
        if (reply === undefined) return Effect.void
        // Runs in the fiber that sent the batch: an attempt, forked by the intake, so it has the loop's context (R).
        return (reply.ok ? fetch.land(reply.value) : fetch.lost(reply.error)).pipe(
          // Started at once: they run up to their completion, which waits for this batch to settle
          // (two in flight); the settle then hands it the next send at once (acker.ts).
          Effect.flatMap((got) => deps.start(got) as Effect.Effect<unknown, never, Broker>),
          Effect.asVoid,
          Effect.catch((e) => Effect.logWarning(`fetching tasks along with completions failed: ${e.message}`))
        )
      }).pipe(
        // The slots stay reserved until the tasks this ride leased are registered (they then
        // count as running): the runtime may switch fibers between two registrations, and the
        // loop must not take a slot in between that one of them is about to fill.
        Effect.ensuring(Effect.sync(() => landed(deps, free)))
      )
  }
}

const landed = <R>(deps: RideSourceDeps<R>, free: number) => {
  deps.slots.reserved -= free
  // A hand-over waiting for these slots (handoverSource.ts) is decided again now that they are
  // known: wake the loop whether it waits for a slot or, gone idle meanwhile, for work.
  if (deps.parking?.pending()) {
    deps.slotFreed.raise()
    deps.wake.raise()
  }
}
