/**
 * The worker's slots, and the one place that decides which source feeds a free one. A task reaches
 * the worker through three sources (sources → this intake → attempts):
 *
 * - the fetch (fetchSource.ts): the fetch loop's own dequeue, for the slots free when it looks;
 * - the ride (rideSource.ts): a dequeue that goes out with a batch of completions (acker.ts), for
 *   the slots those completions free, so one round trip acknowledges and leases;
 * - the hand-over (handoverSource.ts, parking.ts): a task pushed to this worker while it is parked.
 *
 * A slot is running (a task in the registry that holds it), reserved by a ride in flight, or held
 * by the loop's fetch in flight; the rest are free. The rules, all here:
 *
 * - The loop fetches for the free slots, at most `fetchBatchSize` at a time (`fetchWant`).
 * - A ride goes only while the loop is taking tasks and not idle (it found the queues empty: the
 *   ride would come back empty too), for the slots free once its batch's completions land
 *   (`rideWant`); they are reserved until its tasks are registered.
 * - A hand-over starts straight from the receiver's callback only while the loop waits idle and a
 *   slot is free (`startsDirect`); otherwise the loop decides (`pushDecision`): start it on a free
 *   slot, let it wait while a ride holds slots (that ride most likely comes back short: the queue
 *   was empty when the worker parked), else give it back to pending.
 * - An attempt that ends wakes the loop only when that leaves a slot no ride has taken (`freed`).
 */
import type { Registry } from "../registry.js"
import type { Signal } from "../Signal.js"
import type { PushDecision } from "../parking.js"
import type { WritesAside } from "../writesAside.js"

export interface Slots {
  /** Slots neither running, nor reserved by a ride, nor held by the loop's fetch. */
  readonly free: () => number
  /** The loop runs (rides may go); false before it starts and once it ended. */
  taking: boolean
  /** The loop waits for work after a fetch came back short. */
  idle: boolean
  /** Slots the rides in flight will fill (not free for the loop meanwhile). */
  reserved: number
  /** Slots the loop's own fetch in flight will fill (not free for a ride meanwhile). */
  fetching: number
}

/**
 * The slots of a worker running `concurrency` tasks at a time. With `aside` (on a Cluster), a task
 * whose outcome write failed gives its slot back while it stays in the registry (writesAside.ts).
 */
export const makeSlots = (concurrency: number, registry: Registry, aside: WritesAside | undefined): Slots => {
  const tasks = registry.tasks
  const slots: Slots = {
    free: aside
      ? () => concurrency - tasks.size + aside.count() - slots.reserved - slots.fetching
      : () => concurrency - tasks.size - slots.reserved - slots.fetching,
    taking: false,
    idle: false,
    reserved: 0,
    fetching: 0
  }
  return slots
}

/** How many tasks the loop's fetch asks for now (0: none free). */
export const fetchWant = (slots: Slots, fetchBatchSize: number): number => Math.min(slots.free(), fetchBatchSize)

/**
 * How many tasks a ride may lease along with a batch whose in-flight completions free `acks` slots
 * (0: no ride). Not while the loop is stopped or idle.
 */
export const rideWant = (slots: Slots, acks: number, fetchBatchSize: number): number =>
  slots.taking && !slots.idle ? Math.min(slots.free() + acks, fetchBatchSize) : 0

/** Whether a hand-over may start straight from the receiver's callback: the loop waits idle with a slot free. */
export const startsDirect = (slots: Slots): boolean => slots.idle && slots.free() > 0

/**
 * The decision for the waiting hand-overs, one call per hand-over in arrival order: start on a
 * free slot, wait for a ride in flight to land (it holds slots it may not fill), or give it back.
 */
export const pushDecider = (slots: Slots): (() => PushDecision) => {
  let accepted = 0
  return () => {
    if (slots.free() - accepted > 0) {
      accepted++
      return "start"
    }
    return slots.reserved > 0 ? "wait" : "giveBack"
  }
}

/**
 * The signal an ending attempt raises: it wakes the loop only when a slot is free that no ride has
 * taken (at low concurrency the next task usually rode in with the completion).
 */
export const freedSignal = (slots: Slots, slotFreed: Signal): Signal => ({
  ...slotFreed,
  raise: () => {
    if (slots.free() > 0) slotFreed.raise()
  }
})
