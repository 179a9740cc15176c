/**
 * The one intake of a worker's tasks: sources → intake → attempts. It owns the slots (slots.ts,
 * where the rules of which source feeds a free slot are) and makes the task sources, each with its
 * own state: the fetch (fetchSource.ts), the ride on a batch of completions (rideSource.ts, given
 * to the acker it makes) and the hand-over (handoverSource.ts over parking.ts, fed by the
 * receiver). Whatever a source leases starts through start.ts. The Server's fetch loop
 * (fetcher.ts) runs it; a drain uses only its fetch passes (no loop, rides or hand-overs).
 */
import { canLeaseByIds } from "../../broker/leaseByIds.js"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type { Broker } from "../../broker/Broker.js"
import type { RedisError } from "../../redis/errors.js"
import type { DequeueLeaseResult, LeasedTask } from "../../steps/dequeueLease.js"
import type { Acker } from "../acker.js"
import { makeAckerFor } from "../ackerLanes.js"
import { makeParking, type ParkingState } from "../parking.js"
import type { ActiveTask } from "../registry.js"
import type { Signal } from "../Signal.js"
import { makeWritesAside } from "../writesAside.js"
import { type Fetched, type FetchRequest, fetchPass, type FetchSource, makeFetchSource } from "./fetchSource.js"
import { handoverIntake, takeHandovers } from "./handoverSource.js"
import { makeRideSource } from "./rideSource.js"
import { freedSignal, makeSlots, type Slots } from "./slots.js"
import { registerAttempt, type StartDeps, startLeased } from "./start.js"

/** What the intake is made with: what an attempt runs with (less the acker, which the intake makes), and the set its fibers go into. */
export interface IntakeDeps<R> extends Omit<StartDeps<R>, "acker" | "slotFreed"> {}

/** What the Server's fetch loop adds: its signals, and the parking of a worker that parks. */
export interface LoopSettings {
  /** Raised by the subscriber (wake channel), the forwarder, reconnects, and the intake's own sources. */
  readonly wake: Signal
  /** Raised when a slot is free. */
  readonly slotFreed: Signal
  /** The worker's server id, when it parks on the queues it finds empty (single node and Sentinel). */
  readonly parkAs?: string | undefined
}

export interface Intake<R> {
  /** The acker attempts complete through (with the ride, when the loop runs). */
  readonly acker: Acker
  /** One fetch pass (lease, register, start): what a drain runs. */
  readonly take: (request: FetchRequest) => Effect.Effect<Fetched, RedisError, R | Broker>
}

/** The intake the fetch loop runs (fetcher.ts). */
export interface LoopIntake<R> extends Intake<R> {
  readonly slots: Slots
  readonly settings: LoopSettings
  readonly deps: IntakeDeps<R>
  readonly fetch: FetchSource<R>
  /** The hand-over source's state: what the receiver, the subscriber and the hand-over tick feed. */
  readonly parking: ParkingState | undefined
  /** Starts the hand-overs that wait, as slots.ts decides each. */
  readonly takeHandovers: Effect.Effect<unknown, never, R | Broker> | undefined
}

/** A drain's intake: fetch passes only, each leased task started in `deps.attempts`. */
export const makeIntake = <R>(deps: IntakeDeps<R>): Intake<R> => {
  const run: StartDeps<R> = { ...deps, acker: makeAckerFor(deps.broker) }
  const start = (got: DequeueLeaseResult) => startLeased(run, got)
  return { acker: run.acker, take: (request) => fetchPass(start, deps.options.leaseMs, request) }
}

/**
 * The Server's intake (its loop is `fetchLoop`): the slots, the three sources and the acker, made
 * together, each given what it needs when it is made. Attempts it starts outside the loop's fiber
 * (a hand-over from the receiver) run in `deps.attempts` with the context this runs in.
 */
export const makeLoopIntake = <R>(
  deps: IntakeDeps<R>,
  settings: LoopSettings
): Effect.Effect<LoopIntake<R>, never, R | Broker> =>
  Effect.gen(function* () {
    const { options, broker, registry } = deps
    const { wake, slotFreed } = settings
    const cluster = broker.redis.isCluster
    const clock = yield* Clock.Clock
    const runFork = yield* FiberSet.runtime(deps.attempts)<R | Broker>()
    // Each source starts what it leases with `start`/`startOne`: they read `run` (the attempts' deps,
    // made last, with the acker that carries the ride) only when called, after this returns.
    const start = (got: DequeueLeaseResult) => startLeased(run, got)
    const startOne = (task: LeasedTask, nowMs: number) => {
      options.observer?.fetched(1)
      runFork(registerAttempt(run, task, nowMs))
    }
    // On a Cluster, a task whose outcome write failed gives its slot back while the write is retried
    // (writesAside.ts), and its queue rests from the fetch source's next fetch on.
    const aside = cluster
      ? makeWritesAside(
          registry,
          options.concurrency,
          (task) => fetch.writeFailed(task),
          () => slotFreed.raise()
        )
      : undefined
    const slots = makeSlots(options.concurrency, registry, aside)
    const parking =
      settings.parkAs === undefined
        ? undefined
        : makeParking(settings.parkAs, options.queueNames, handoverIntake({ slots, wake, slotFreed, clock, startOne }))
    const fetch = makeFetchSource<R>({
      options,
      wake,
      slotFreed,
      deadlines: deps.deadlines,
      cluster,
      parking: parking?.parking,
      start
    })
    const rider = cluster
      ? undefined
      : makeRideSource<R>({ options, broker, slots, wake, slotFreed, parking, start, byIds: canLeaseByIds(broker) })
    const prepare = aside
      ? (task: ActiveTask) => {
          deps.prepare?.(task)
          aside.watch(task)
        }
      : deps.prepare
    const run: StartDeps<R> = {
      ...deps,
      acker: makeAckerFor(broker, rider),
      slotFreed: freedSignal(slots, slotFreed),
      prepare
    }
    return {
      acker: run.acker,
      take: (request) => fetchPass(start, options.leaseMs, request),
      slots,
      settings,
      deps,
      fetch,
      parking,
      takeHandovers: parking && takeHandovers(parking, slots, start)
    } satisfies LoopIntake<R>
  })
