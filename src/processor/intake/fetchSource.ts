/**
 * The fetch: a task source that leases tasks with a dequeue of its own. One fetch pass leases up to
 * `count` tasks in a given queue order, registers each and starts its attempt — what the fetch
 * loop and a drain both run. For the loop (fetcher.ts), the source also keeps what its fetches
 * need between rounds: this round's queue order, on a Cluster the queues resting after a failure
 * (queueRest.ts) or after a failed outcome write (writesAside.ts), the backoff of a fetch in which
 * every queue failed (with jitter, up to 5 s), and when to look again after a fetch came back
 * short (a wake-up, or the poll interval: no fixed sleep between fetches and no busy polling).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { Broker } from "../../broker/Broker.js"
import type { RedisError } from "../../redis/errors.js"
import { type DequeueLeaseResult, type FlowLimited, leaseFrom, type Parking } from "../../steps/dequeueLease.js"
import type { QueueFailure } from "../../steps/queueFailures.js"
import type { Deadlines } from "../deadlines.js"
import { flowIdleWait } from "../flowWait.js"
import type { ResolvedOptions } from "../options.js"
import { queueOrder } from "../queueOrder.js"
import { makeQueueRest } from "../queueRest.js"
import type { ActiveTask } from "../registry.js"
import { replayFirst } from "../replayFirst.js"
import type { Settled } from "../settle.js"
import type { Signal } from "../Signal.js"

/** What one fetch pass took. */
export interface Fetched {
  /** One started attempt per leased task (join one for its outcome). */
  readonly started: ReadonlyArray<Fiber.Fiber<Settled>>
  /** Corrupt messages dequeue set aside (archived with the decode error; logged). */
  readonly corrupt: number
  /** Queues that could not be served in this pass (logged); the others were. */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /** Set when a queue's flow-control limit held back tasks this pass would have taken (flowWait.ts). */
  readonly limited?: FlowLimited
}

/** What a fetch pass asks for: the queues in the order to visit, how many tasks, and the parking of a worker that parks. */
export interface FetchRequest {
  readonly queues: ReadonlyArray<string>
  readonly count: number
  readonly parking?: Parking | undefined
}

/** Registers and starts the tasks a lease brought (start.ts, bound to the intake's attempts). */
export type StartLeased<R> = (got: DequeueLeaseResult) => Effect.Effect<Array<Fiber.Fiber<Settled>>, never, R | Broker>

/**
 * One fetch pass: leases up to `count` tasks from `queues` (visited in that order), registers them
 * and starts their attempts. Uninterruptible, so a leased task is always registered and started.
 * A queue that fails is reported in `failedQueues` and the other queues' tasks start; the pass
 * fails only when every queue it visited failed (nothing was leased then).
 */
export const fetchPass = <R>(
  start: StartLeased<R>,
  leaseMs: number,
  request: FetchRequest
): Effect.Effect<Fetched, RedisError, R | Broker> =>
  Effect.uninterruptible(
    Effect.flatMap(
      leaseFrom(request.queues, request.count, leaseMs, { parking: request.parking, firstLook: true }),
      (got) =>
        Effect.map(
          start(got),
          (started): Fetched =>
            got.limited
              ? { started, corrupt: got.corrupt.length, failedQueues: got.failedQueues, limited: got.limited }
              : { started, corrupt: got.corrupt.length, failedQueues: got.failedQueues }
        )
    )
  )

/** The fetch loop's fetches. */
export interface FetchSource<R> {
  /**
   * Fetches for `want` free slots in this round's queue order; a fetch in which every queue failed
   * is tried again after a backoff. Returns whether it came back short (the queues are empty).
   */
  readonly fetch: (want: number) => Effect.Effect<boolean, never, R | Broker | Scope.Scope>
  /**
   * After a short fetch: waits for a wake-up, or until the poll interval has passed — or, when a
   * queue's flow limit held that fetch back, until its next allowance (and, at a concurrency cap,
   * until one of this worker's attempts ends): flowWait.ts.
   */
  readonly untilNextLook: Effect.Effect<void>
  /** A task whose outcome write failed (on a Cluster; writesAside.ts): its queue rests from the next fetch on. */
  readonly writeFailed: (task: ActiveTask) => void
}

const errorBackoff = Schedule.min([
  Schedule.exponential(Duration.millis(100), 2),
  Schedule.spaced(Duration.seconds(5))
]).pipe(Schedule.jittered)

/** What the fetch loop's fetches run with. */
export interface FetchSourceDeps<R> {
  readonly options: ResolvedOptions
  /** Raised by the subscriber (wake channel), the forwarder, reconnects and the deadline of the poll interval. */
  readonly wake: Signal
  /** Raised when one of this worker's attempts ends (a queue at its concurrency cap may have room then). */
  readonly slotFreed: Signal
  readonly deadlines: Deadlines
  /** On a Cluster, failing queues rest (queueRest.ts). */
  readonly cluster: boolean
  /** With it, the fetches park on the queues they find empty (parking.ts). */
  readonly parking: Parking | undefined
  readonly start: StartLeased<R>
}

export const makeFetchSource = <R>(deps: FetchSourceDeps<R>): FetchSource<R> => {
  const { options, wake } = deps
  const rest = deps.cluster ? makeQueueRest() : undefined
  /** Queues of tasks whose outcome write failed, to rest from the next fetch on. */
  const writeFailedQueues: Array<QueueFailure> = []
  /** How a flow limit held back the last fetch (undefined: it did not). */
  let lastLimited: FlowLimited | undefined
  // A parked worker's token is the lease of whatever is handed to it (parking.ts): the idle loop
  // looks again (and leaves a fresh token) at least every half lease, so a hand-over arrives with
  // half a lease or more left. The default poll interval (1 s) is far below that.
  const idleWaitMs = deps.parking
    ? Math.min(options.pollIntervalMs, Math.floor(options.leaseMs / 2))
    : options.pollIntervalMs

  /** One fetch: this round's queue order (less the resting queues), for `want` slots. Returns whether it came back short. */
  const fetchOnce = (want: number) =>
    // fetchPass itself is uninterruptible (a leased task is always started); nothing before it needs to be.
    Effect.flatMap(queueOrder(options.queues, options.strictPriority), (order) => {
      wake.clear()
      return Effect.flatMap(
        fetchPass(deps.start, options.leaseMs, {
          queues: rest ? rest.usable(order) : order,
          count: want,
          parking: deps.parking
        }),
        (got) => {
          lastLimited = got.limited
          const short = got.started.length + got.corrupt < want
          return rest && got.failedQueues.length > 0
            ? Effect.as(rest.failed(got.failedQueues), short)
            : Effect.succeed(short)
        }
      )
    })

  const fetch = (want: number): Effect.Effect<boolean, never, R | Broker | Scope.Scope> => {
    const once = fetchOnce(want)
    // The first try runs bare (no retry schedule built for the usual case); a failure goes on as
    // Effect.retry with the backoff from its first delay (the first failure is replayed, not re-sent).
    const tried = Effect.catch(once, (first) =>
      replayFirst(first, once).pipe(
        Effect.retry({
          schedule: errorBackoff,
          while: (e) => Effect.logWarning(`fetching tasks failed, trying again: ${e.message}`).pipe(Effect.as(true))
        }),
        Effect.orDie
      )
    )
    return rest && writeFailedQueues.length > 0
      ? Effect.andThen(rest.failed(writeFailedQueues.splice(0)), tried)
      : tried
  }

  // The next look is a deadline on the shared timer that raises the wake signal: the wait itself
  // is a plain one, which a wake-up message resumes at once (no race with a sleep set up per wait).
  // A flow limit that held the last fetch back moves the deadline to its next allowance.
  const untilNextLook = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const next = flowIdleWait(lastLimited, now, idleWaitMs)
    const unwatch = deps.deadlines.add(next.deadlineMs, () => wake.raise())
    const woken = next.onSlotFreed ? Effect.raceFirst(wake.wait(), deps.slotFreed.wait()) : wake.wait()
    return woken.pipe(Effect.ensuring(Effect.sync(unwatch)))
  }).pipe(Effect.asVoid)

  return {
    fetch,
    untilNextLook,
    writeFailed: (task) =>
      void writeFailedQueues.push({ queue: task.msg.queue, error: "writing a task's outcome failed" })
  }
}
