/**
 * Fetching tasks: one fetch pass (lease up to `count` tasks in a given queue order, register each
 * and start its attempt) — what the Server's fetch loop and a drain both run — and the Server's
 * fetch loop: while fewer than `concurrency` tasks run, take up to the free slots (at most
 * `fetchBatchSize`) in one round trip, in the queue order of this round. When a fetch comes back
 * short (the queues are empty), wait for the wake signal or the poll interval; when all slots are
 * busy, wait for a slot. No fixed sleep between fetches and no busy polling. While it waits idle,
 * a task handed over to this worker (parking.ts) starts straight from the receiver's callback. A queue that fails
 * is logged and skipped for this fetch (the tasks taken from the other queues start); a fetch in
 * which every queue failed (Redis down) backs off with jitter, up to 5 s.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Schedule from "effect/Schedule"
import type { Broker } from "../broker/Broker.js"
import { type DequeueLeaseResult, dequeueLeaseCall, type FlowLimited, type LeasedTask, leaseFrom, type Parking } from "../steps/dequeueLease.js"
import { flowIdleWait } from "./flowWait.js"
import type { RedisError } from "../redis/errors.js"
import type { QueueFailure } from "../steps/queueFailures.js"
import type { Ride, Rider } from "./acker.js"
import { queueOrder } from "./queueOrder.js"
import { replayFirst } from "./replayFirst.js"
import { makeQueueRest, type QueueRest } from "./queueRest.js"
import { makeWritesAside } from "./writesAside.js"
import type { ActiveTask } from "./registry.js"
import { makeActiveTask, runAttempt, type RunDeps } from "./runAttempt.js"
import type { Settled } from "./settle.js"
import { logQueueFailures } from "./periodic.js"
import type { Signal } from "./Signal.js"
import type { DirectStart, ParkingState, PushDecision } from "./parking.js"

/** What starting leased tasks needs: what an attempt runs with, and the set its fiber goes into. */
export interface StartDeps<R> extends RunDeps<R> {
  /** The attempts running now (their fibers end with the scope that made the set). */
  readonly attempts: FiberSet.FiberSet<Settled, never>
  /** Raised when an attempt ends (a slot is free). */
  readonly slotFreed?: Signal
  /**
   * Adjusts each freshly leased task before it is registered and started (a drain bounds the
   * outcome write by its own end and, once past its hard stop, has the task stopped at once).
   */
  readonly prepare?: (task: ActiveTask) => void
}

export interface FetcherDeps<R> extends StartDeps<R> {
  /** Raised by the subscriber (wake channel), the forwarder, and reconnects. */
  readonly wake: Signal
  readonly slotFreed: Signal
  /** With it, the loop parks on the queues it finds empty and starts the tasks handed to it (parking.ts). */
  readonly parking?: ParkingState
}

/** What one fetch pass took. */
export interface Fetched {
  /** One started attempt per leased task (join one for its outcome). */
  readonly started: ReadonlyArray<Fiber.Fiber<Settled>>
  /** Corrupt messages dequeue set aside (archived with the decode error; logged). */
  readonly corrupt: number
  /** Queues that could not be served in this pass (logged); the others were. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /** Set when a queue's flow-control limit held back tasks this pass would have taken. */
  readonly limited?: FlowLimited
}

const errorBackoff = Schedule.min([Schedule.exponential(Duration.millis(100), 2), Schedule.spaced(Duration.seconds(5))]).pipe(Schedule.jittered)

/**
 * Registers a freshly leased task and returns its attempt, to run in a fiber of `deps.attempts`
 * (with the observer's span, `onSettled`, and the slot-freed signal when it ends).
 */
const registerAttempt = <R>(deps: StartDeps<R>, leased: LeasedTask, now: number): Effect.Effect<Settled, never, R | Broker> => {
  const task = makeActiveTask(leased.msg, now, leased.leaseExpiresAtMs)
  deps.prepare?.(task)
  deps.registry.add(task)
  const observer = deps.options.observer
  const run = observer ? observer.attempt(task, runAttempt(deps, task)) : runAttempt(deps, task)
  const onSettled = deps.options.onSettled
  const attempt = onSettled
    ? run.pipe(Effect.tap((outcome) => Effect.try(() => onSettled(task.msg, outcome)).pipe(Effect.catch((e) => Effect.logWarning(`onSettled threw: ${String(e)}`)))))
    : run
  const slotFreed = deps.slotFreed
  return slotFreed ? Effect.ensuring(attempt, Effect.sync(() => slotFreed.raise())) : attempt
}

/**
 * Registers and starts freshly leased tasks (each attempt in its own fiber, started at once: it runs
 * up to its first wait), and reports the corrupt ones set aside and the queues that failed.
 */
const startLeased = <R>(deps: StartDeps<R>, got: DequeueLeaseResult): Effect.Effect<Array<Fiber.Fiber<Settled>>, never, R | Broker> => {
  const start = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    deps.options.observer?.fetched(got.tasks.length)
    const startOne = (leased: LeasedTask) => FiberSet.run(deps.attempts, registerAttempt(deps, leased, now), { startImmediately: true })
    // One task (a hand-over, a fetch at low load) without forEach's machinery.
    return got.tasks.length === 1 ? Effect.map(startOne(got.tasks[0]!), (f) => [f]) : Effect.forEach(got.tasks, startOne)
  })
  // The common case, nothing corrupt and no queue failed, logs nothing.
  if (got.corrupt.length === 0 && got.failedQueues.length === 0) return start
  return Effect.andThen(
    Effect.andThen(
      Effect.forEach(got.corrupt, (c) => Effect.logError(`task ${c.id} in queue "${c.queue}" ${c.outcome}: ${c.error}`), { discard: true }),
      logQueueFailures("taking tasks", got.failedQueues)
    ),
    start
  )
}

/**
 * One fetch pass: leases up to `count` tasks from `queues` (visited in that order), registers them
 * and starts their attempts. Uninterruptible, so a leased task is always registered and started.
 * A queue that fails is reported in `failedQueues` and the other queues' tasks start; the pass
 * fails only when every queue it visited failed (nothing was leased then).
 */
export const fetchPass = <R>(
  deps: StartDeps<R>,
  request: { readonly queues: ReadonlyArray<string>; readonly count: number; readonly parking?: Parking | undefined }
): Effect.Effect<Fetched, RedisError, R | Broker> =>
  Effect.uninterruptible(
    Effect.flatMap(leaseFrom(request.queues, request.count, deps.options.leaseMs, request.parking), (got) =>
      Effect.map(startLeased(deps, got), (started): Fetched =>
        got.limited
          ? { started, corrupt: got.corrupt.length, failedQueues: got.failedQueues, limited: got.limited }
          : { started, corrupt: got.corrupt.length, failedQueues: got.failedQueues }
      )
    )
  )

/**
 * The fetch loop's fetch: this round's queue order (less the queues resting after a failure, on a
 * Cluster: see queueRest.ts), for `want` slots. Returns whether it came back short, and whether a
 * queue's flow-control limit held it back (flowWait.ts).
 */
const fetchForSlots = <R>(deps: FetcherDeps<R>, want: number, rest: QueueRest | undefined) =>
  // fetchPass itself is uninterruptible (a leased task is always started); nothing before it needs to be.
  Effect.flatMap(queueOrder(deps.options.queues, deps.options.strictPriority), (order) => {
    deps.wake.clear()
    return Effect.flatMap(fetchPass(deps, { queues: rest ? rest.usable(order) : order, count: want, parking: deps.parking?.parking }), (got) => {
      const short = got.started.length + got.corrupt < want
      const out = { short, limited: got.limited }
      return rest && got.failedQueues.length > 0 ? Effect.as(rest.failed(got.failedQueues), out) : Effect.succeed(out)
    })
  })

export const fetchLoop = <R>(deps: FetcherDeps<R>): Effect.Effect<never, never, R | Broker> =>
  Effect.gen(function* () {
    const { concurrency, pollIntervalMs, leaseMs } = deps.options
    // A parked worker's token is the lease of whatever is handed to it (parking.ts): the idle loop
    // looks again (and leaves a fresh token) at least every half lease, so a hand-over arrives with
    // half a lease or more left. The default poll interval (1 s) is far below that.
    const idleWaitMs = deps.parking ? Math.min(pollIntervalMs, Math.floor(leaseMs / 2)) : pollIntervalMs
    // Unless the queues were found empty (the loop then waits for a wake or the poll interval), the
    // next fetch rides along with the completions that free slots (one round trip for both): from
    // the first queue of this round's order, for the slots free once those completions land. Whatever
    // it leaves (a short reply, other queues) the loop fetches. Not only while the loop waits for a
    // slot: a task that ends before the loop is back waiting (a fast handler) still brings the next one.
    let idle = false
    /** Slots a ride in flight will fill (not free for the loop meanwhile). */
    let reserved = 0
    /** Slots the loop's own fetch in flight will fill (not free for a ride meanwhile). */
    let fetching = 0
    const rest = deps.broker.redis.isCluster ? makeQueueRest() : undefined
    // On a Cluster, a task whose outcome write failed gives its slot back while the write is retried (writesAside.ts).
    // Its queue rests from the next fetch on, as after a failed fetch from it.
    const writeFailedQueues: Array<QueueFailure> = []
    const aside = rest
      ? makeWritesAside(
          deps.registry,
          concurrency,
          (task) => void writeFailedQueues.push({ queue: task.msg.queue, error: "writing a task's outcome failed" }),
          () => deps.slotFreed.raise()
        )
      : undefined
    const freeSlots = aside
      ? () => concurrency - deps.registry.tasks.size + aside.count() - reserved - fetching
      : () => concurrency - deps.registry.tasks.size - reserved - fetching
    // An attempt that ends wakes the loop only when that leaves a slot no ride has taken (at low
    // concurrency the next task usually rode in with the completion, and the loop has nothing to do).
    const slotFreed: Signal = {
      ...deps.slotFreed,
      raise: () => {
        if (freeSlots() > 0) deps.slotFreed.raise()
      }
    }
    const loopDeps: FetcherDeps<R> = aside
      ? {
          ...deps,
          slotFreed,
          prepare: (task) => {
            deps.prepare?.(task)
            aside.watch(task)
          }
        }
      : { ...deps, slotFreed }
    const broker = deps.broker
    const rider: Rider = (acks) =>
      Effect.suspend(() => {
        if (idle) return Effect.undefined
        const free = Math.min(freeSlots() + acks, deps.options.fetchBatchSize)
        if (free <= 0) return Effect.undefined
        reserved += free
        return Effect.flatMap(queueOrder(deps.options.queues, deps.options.strictPriority), (order) => Effect.map(Clock.currentTimeMillis, (now): Ride => {
          deps.wake.clear()
          const fetch = dequeueLeaseCall(order[0]!, free, deps.options.leaseMs, now, broker.redis.connectionState().outages)
          return {
            call: fetch.call,
            lease: fetch.lease,
            land: (reply) =>
              Effect.suspend(() => {
                if (reply === undefined) return Effect.void
                // Runs in the fiber that sent the batch: an attempt, forked by this loop, so it has the loop's context (R).
                return (reply.ok ? fetch.land(reply.value) : fetch.lost(reply.error)).pipe(
                  // Started at once: they run up to their completion, which waits for this batch to settle
                  // (two in flight); the settle then hands it the next send at once (acker.ts).
                  Effect.flatMap((got) => startLeased(loopDeps, got) as Effect.Effect<unknown, never, Broker>),
                  Effect.asVoid,
                  Effect.catch((e) => Effect.logWarning(`fetching tasks along with completions failed: ${e.message}`))
                )
              }).pipe(
                // The slots stay reserved until the tasks this ride leased are registered (they then
                // count as running): the runtime may switch fibers between two registrations, and the
                // loop must not take a slot in between that one of them is about to fill.
                Effect.ensuring(
                  Effect.sync(() => {
                    reserved -= free
                    // A push waiting for these slots (takePushes) is decided again now that they are known:
                    // wake the loop whether it waits for a slot or, gone idle meanwhile, for work.
                    if (deps.parking?.pending()) {
                      deps.slotFreed.raise()
                      deps.wake.raise()
                    }
                  })
                )
              )
          }
        }))
      })
    deps.acker.setRider(rider as Rider)
    yield* Effect.addFinalizer(() => Effect.sync(() => deps.acker.setRider(undefined)))
    const parking = deps.parking
    // While the loop waits idle, a hand-over with a free slot starts straight from the receiver's
    // callback (parking.ts, onPush): no wake-up of this loop and no Effect steps before its attempt's
    // fiber. A park has room for as many tasks as its fetch left slots free: only when that is used
    // up is the loop woken, to park again (a fetch), off that task's path.
    const clock = yield* Clock.Clock
    const runFork = yield* FiberSet.runtime(deps.attempts)<R | Broker>()
    const direct: DirectStart | undefined = parking && {
      nowMs: () => clock.currentTimeMillisUnsafe(),
      hasSlot: () => freeSlots() > 0,
      start: (leased) => {
        deps.options.observer?.fetched(1)
        runFork(registerAttempt(loopDeps, leased, clock.currentTimeMillisUnsafe()))
      },
      repark: () => deps.wake.raise()
    }
    if (parking) yield* Effect.addFinalizer(() => Effect.flatMap(Clock.currentTimeMillis, parking.leave))
    /**
     * Starts the tasks handed over while parked, as many as slots are free. With none free while a
     * ride is in flight (it holds the slots it may fill: a push found this worker parked, so that
     * ride most likely comes back short), the others wait for it to land (`land` wakes the loop);
     * otherwise they go back to pending. A waiting push is leased to this worker but not yet
     * registered (its lease is not extended): it waits at most `maxPushWaitMs` (parking.ts).
     */
    const takePushes = (p: ParkingState) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        let accepted = 0
        return p.settle((): PushDecision => (freeSlots() - accepted > 0 ? (accepted++, "start") : reserved > 0 ? "wait" : "giveBack"), now)
      }).pipe(
        Effect.flatMap((got) => (got.tasks.length + got.corrupt.length + got.failedQueues.length === 0 ? Effect.void : startLeased(loopDeps, got))),
        Effect.uninterruptible
      )
    for (;;) {
      deps.slotFreed.clear()
      if (parking?.pending()) yield* takePushes(parking)
      const free = freeSlots()
      if (free <= 0) {
        yield* deps.slotFreed.wait()
        continue
      }
      // Let other finished tasks settle first, so one round trip takes several tasks.
      if (free < deps.options.fetchBatchSize && deps.registry.tasks.size > 0) yield* Effect.yieldNow
      const want = Math.min(freeSlots(), deps.options.fetchBatchSize)
      if (want <= 0) continue
      fetching = want
      if (rest && writeFailedQueues.length > 0) yield* rest.failed(writeFailedQueues.splice(0))
      const fetch = fetchForSlots(loopDeps, want, rest)
      // The first try runs bare (no retry schedule built for the usual case); a failure goes on as
      // Effect.retry with the backoff from its first delay (the first failure is replayed, not re-sent).
      const { short, limited } = yield* Effect.catch(fetch, (first) =>
        replayFirst(first, fetch).pipe(
          Effect.retry({
            schedule: errorBackoff,
            while: (e) => Effect.logWarning(`fetching tasks failed, trying again: ${e.message}`).pipe(Effect.as(true))
          }),
          Effect.orDie
        )
      ).pipe(Effect.ensuring(Effect.sync(() => (fetching = 0))))
      if (short) {
        idle = true
        // The poll interval is a deadline on the shared timer that raises the wake signal: the wait itself
        // is a plain one, which a wake-up message resumes at once (no race with a sleep set up per wait).
        // A queue's flow limit that held this fetch back shortens the wait to its next allowance (flowWait.ts).
        const idleWait = flowIdleWait(limited, yield* Clock.currentTimeMillis, idleWaitMs)
        const unwatch = deps.deadlines.add(idleWait.deadlineMs, () => deps.wake.raise())
        parking?.setDirect(direct)
        yield* (idleWait.onSlotFreed ? Effect.raceFirst(deps.wake.wait(), deps.slotFreed.wait()) : deps.wake.wait()).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              parking?.setDirect(undefined)
              idle = false
              unwatch()
            })
          )
        )
      }
    }
  }).pipe(Effect.scoped) as Effect.Effect<never, never, R | Broker>
