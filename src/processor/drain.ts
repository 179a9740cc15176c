/**
 * The time-boxed drain, for functions (Lambda, Cloud Functions): takes tasks with the Server's
 * fetch pass (lease, register, run an attempt) and runs them with the processor's own parts — the
 * same handlers (a function, a record of patterns, or a ServeMux), TaskContext and AbortSignal,
 * per-task timeout/deadline, SkipRetry/RevokeTask, retryDelay, isFailure and errorHandler, lease
 * heartbeat, batched acknowledgements — until the queues are empty or the invocation's time runs
 * short. No forwarder, recoverer or server state: the
 * maintenance tick does that work in a serverless deployment.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import { Broker } from "../broker/Broker.js"
import { makeAcker } from "./acker.js"
import { fetchPass, type StartDeps } from "./fetcher.js"
import { heartbeatLoop } from "./heartbeat.js"
import { handlerOf, type HandlerInput } from "./Mux.js"
import { resolveOptions, type ServerOptions } from "./options.js"
import { makeRegistry } from "./registry.js"
import type { Settled } from "./settle.js"

export interface DrainConfig<R = never>
  extends Pick<ServerOptions, "retryDelay" | "isFailure" | "errorHandler" | "leaseMs" | "heartbeatIntervalMs"> {
  /** Queues to take tasks from, highest priority first (strict order). */
  readonly queues: ReadonlyArray<string>
  /** The handlers, in any form the Server takes: `(task, signal) => …`, `{ "email:": fn, … }` or a ServeMux. */
  readonly handler: HandlerInput<R>
  /** Tasks run at the same time (default 1). */
  readonly concurrency?: number
  /** Stop taking tasks when less than this is left before the deadline (default 10 000 ms). */
  readonly safetyMarginMs?: number
}

/** What one drain did. */
export interface DrainSummary {
  readonly succeeded: number
  /** Failed attempts sent to retry. */
  readonly retried: number
  /** Failed attempts with no retry left (or SkipRetry), archived. */
  readonly archived: number
  /** Tasks dropped by RevokeTask. */
  readonly revoked: number
  /** Tasks given back unfinished because the invocation's time ran out. */
  readonly requeued: number
  /** Tasks whose lease was lost while running (recovered elsewhere): nothing was written for them. */
  readonly leaseLost: number
  /** Tasks whose outcome could not be written before their lease ran out or the drain had to return (the recoverer takes them back). */
  readonly gaveUp: number
  /** Corrupt messages dequeue set aside (archived with the decode error). */
  readonly corrupt: number
  /** Why the drain ended: no task left, or the safety margin was reached. */
  readonly stoppedBecause: "empty" | "deadline"
  /** Milliseconds left before the deadline when the drain returned. */
  readonly remainingMs: number
}

const counter: Record<Settled, "succeeded" | "retried" | "archived" | "revoked" | "requeued" | "leaseLost" | "gaveUp"> = {
  completed: "succeeded",
  retried: "retried",
  archived: "archived",
  revoked: "revoked",
  requeued: "requeued",
  "lease-lost": "leaseLost",
  "gave-up": "gaveUp"
}

/**
 * Processes tasks until the queues are empty or less than `safetyMarginMs` is left before
 * `deadlineMs` (a time on Effect's Clock). Then it takes no more; tasks still running get until
 * half the margin is left, after which they are stopped (their AbortSignal fires) and put back at
 * the head of their queue, so the drain returns before its deadline with a summary. An outcome
 * Redis has not taken a quarter of the margin before the deadline is given up (`gaveUp`). If the
 * function is killed anyway, the leases expire and `recover` returns its tasks.
 */
export const drain = <R = never>(config: DrainConfig<R>, deadlineMs: number) =>
  Effect.gen(function* () {
    const margin = config.safetyMarginMs ?? 10_000
    const hardStopMs = deadlineMs - margin / 2
    /** Writing an outcome is given up here (the lease lets `recover` take the task back). */
    const settleByMs = deadlineMs - margin / 4
    const options = yield* resolveOptions({
      concurrency: config.concurrency ?? 1,
      // strict priority in the order given
      queues: Object.fromEntries(config.queues.map((q, i) => [q, config.queues.length - i])),
      strictPriority: true,
      ...(config.retryDelay ? { retryDelay: config.retryDelay } : {}),
      ...(config.isFailure ? { isFailure: config.isFailure } : {}),
      ...(config.errorHandler ? { errorHandler: config.errorHandler } : {}),
      ...(config.leaseMs !== undefined ? { leaseMs: config.leaseMs } : {}),
      ...(config.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: config.heartbeatIntervalMs } : {})
    })
    const registry = makeRegistry()
    const counts = { succeeded: 0, retried: 0, archived: 0, revoked: 0, requeued: 0, leaseLost: 0, gaveUp: 0, corrupt: 0 }
    let stoppedBecause: "empty" | "deadline" = "empty"
    /** Set at the hard stop: a task leased by a fetch that was in flight then goes straight back. */
    let stopping = false
    const deps: StartDeps<R> = {
      options,
      handler: handlerOf(config.handler),
      registry,
      broker: yield* Broker,
      acker: makeAcker(),
      attempts: yield* FiberSet.make<Settled, never>(),
      prepare: (task) => {
        // A Redis that hangs when the outcome is written must not hold the drain past its deadline.
        task.settleByMs = settleByMs
        if (stopping) task.stopReason = "shutdown"
      }
    }

    /** Takes one task at a time, in strict priority order, and waits for its outcome. */
    const worker = Effect.gen(function* () {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        if (deadlineMs - now < margin) {
          stoppedBecause = "deadline"
          return
        }
        const { started, corrupt } = yield* fetchPass(deps, { queues: config.queues, count: 1 })
        counts.corrupt += corrupt
        const attempt = started[0]
        if (!attempt) return
        counts[counter[yield* Fiber.join(attempt)]]++
      }
    })

    const heartbeat = yield* Effect.forkChild(heartbeatLoop(registry, options.leaseMs, options.heartbeatIntervalMs), { startImmediately: true })
    const start = yield* Clock.currentTimeMillis
    const hardStop = yield* Effect.forkChild(
      Effect.sleep(Duration.millis(Math.max(0, hardStopMs - start))).pipe(
        Effect.andThen(
          Effect.sync(() => {
            stoppedBecause = "deadline"
            stopping = true
            registry.stopAll("shutdown")
          })
        )
      ),
      { startImmediately: true }
    )
    yield* Effect.forEach(Array.from({ length: options.concurrency }), () => worker, { concurrency: "unbounded", discard: true }).pipe(
      Effect.ensuring(Fiber.interruptAll([heartbeat, hardStop]))
    )
    const end = yield* Clock.currentTimeMillis
    return { ...counts, stoppedBecause, remainingMs: deadlineMs - end } satisfies DrainSummary as DrainSummary
  }).pipe(Effect.scoped, Effect.withSpan("Processor.drain"))
