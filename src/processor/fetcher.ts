/**
 * The fetch loop: while fewer than `concurrency` tasks run, take up to the free slots (at most
 * `fetchBatchSize`) in one round trip, in the queue order of this round, and start each task in its
 * own fiber. When a fetch comes back short (the queues are empty), wait for the wake signal or the
 * poll interval; when all slots are busy, wait for a slot. No fixed sleep between fetches and no
 * busy polling. A failing fetch (Redis down) backs off with jitter, up to 5 s.
 */
import { Clock, Duration, Effect, FiberSet, Schedule } from "effect"
import type { Broker } from "../broker/Broker.js"
import { type DequeueLeaseResult, dequeueLease, dequeueLeaseCall } from "../steps/dequeueLease.js"
import type { Ride, Rider } from "./acker.js"
import type { ResolvedOptions } from "./options.js"
import { queueOrder } from "./queueOrder.js"
import type { Registry } from "./registry.js"
import { makeEntry, runTask, type RunDeps } from "./runTask.js"
import type { Signal } from "./Signal.js"

export interface FetcherDeps<R> extends RunDeps<R> {
  readonly options: ResolvedOptions
  readonly registry: Registry
  /** Raised by the subscriber (wake channel), the forwarder, and reconnects. */
  readonly wake: Signal
  /** Raised when a task finishes (a slot is free). */
  readonly slotFreed: Signal
  readonly tasks: FiberSet.FiberSet<unknown, never>
}

const errorBackoff = Schedule.min([Schedule.exponential(Duration.millis(100), 2), Schedule.spaced(Duration.seconds(5))]).pipe(Schedule.jittered)

/** Registers and starts freshly leased tasks, and reports the corrupt ones set aside. */
const startLeased = <R>(deps: FetcherDeps<R>, got: DequeueLeaseResult) =>
  Effect.gen(function* () {
    for (const c of got.corrupt) yield* Effect.logError(`task ${c.id} in queue "${c.queue}" ${c.outcome}: ${c.error}`)
    const now = yield* Clock.currentTimeMillis
    for (const leased of got.tasks) {
      const entry = makeEntry(leased.msg, now, leased.leaseExpiresAtMs)
      deps.registry.add(entry)
      const onSettled = deps.options.onSettled
      const run = onSettled
        ? runTask(deps, entry).pipe(
            Effect.tap((outcome) => Effect.try(() => onSettled(entry.msg, outcome)).pipe(Effect.catch((e) => Effect.logWarning(`onSettled threw: ${String(e)}`))))
          )
        : runTask(deps, entry)
      yield* FiberSet.run(deps.tasks, run.pipe(Effect.ensuring(Effect.sync(() => deps.slotFreed.raise()))))
    }
  })

/** One fetch: takes tasks and starts them. Uninterruptible, so a taken task is always registered and started. Returns whether it came back short. */
const fetchOnce = <R>(deps: FetcherDeps<R>, free: number) =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const order = yield* queueOrder(deps.options.queues, deps.options.strictPriority)
      const want = Math.min(free, deps.options.fetchBatchSize)
      deps.wake.clear()
      const got = yield* dequeueLease({ queues: order, count: want, leaseMs: deps.options.leaseMs })
      yield* startLeased(deps, got)
      return got.tasks.length + got.corrupt.length < want
    })
  )

export const fetchLoop = <R>(deps: FetcherDeps<R>): Effect.Effect<never, never, R | Broker> =>
  Effect.gen(function* () {
    const { concurrency, pollIntervalMs } = deps.options
    // While every slot is busy, the next fetch rides along with the completions that free slots
    // (one round trip for both): from the first queue of this round's order, for the slots free
    // once those completions land. Whatever it leaves (a short reply, other queues) the loop fetches.
    let waitingForSlot = false
    /** Slots a ride in flight will fill (not free for the loop meanwhile). */
    let reserved = 0
    const freeSlots = () => concurrency - deps.registry.tasks.size - reserved
    const context = yield* Effect.context<R | Broker>()
    const rider: Rider = (acks) =>
      Effect.gen(function* () {
        if (!waitingForSlot) return undefined
        const free = Math.min(freeSlots() + acks, deps.options.fetchBatchSize)
        if (free <= 0) return undefined
        reserved += free
        const order = yield* queueOrder(deps.options.queues, deps.options.strictPriority)
        deps.wake.clear()
        const fetch = dequeueLeaseCall(order[0]!, free, deps.options.leaseMs, yield* Clock.currentTimeMillis)
        return {
          call: fetch.call,
          land: (reply) =>
            Effect.suspend(() => {
              reserved -= free
              if (reply === undefined) return Effect.void
              return (reply.ok ? fetch.land(reply.value) : Effect.fail(reply.error)).pipe(
                Effect.flatMap((got) => startLeased(deps, got)),
                Effect.catch((e) => Effect.logWarning(`fetching tasks along with completions failed: ${e.message}`)),
                Effect.provideContext(context)
              )
            })
        } satisfies Ride
      }) as Effect.Effect<Ride | undefined, never, Broker>
    deps.acker.setRider(rider as Rider)
    yield* Effect.addFinalizer(() => Effect.sync(() => deps.acker.setRider(undefined)))
    for (;;) {
      deps.slotFreed.clear()
      const free = freeSlots()
      if (free <= 0) {
        waitingForSlot = true
        yield* deps.slotFreed.wait().pipe(Effect.ensuring(Effect.sync(() => (waitingForSlot = false))))
        continue
      }
      // Let other finished tasks settle first, so one round trip takes several tasks.
      if (free < deps.options.fetchBatchSize && deps.registry.tasks.size > 0) yield* Effect.yieldNow
      const short = yield* fetchOnce(deps, freeSlots()).pipe(
        Effect.retry({
          schedule: errorBackoff,
          while: (e) => Effect.logWarning(`fetching tasks failed, trying again: ${e.message}`).pipe(Effect.as(true))
        }),
        Effect.orDie
      )
      if (short) yield* deps.wake.wait(pollIntervalMs)
    }
  }).pipe(Effect.scoped) as Effect.Effect<never, never, R | Broker>
