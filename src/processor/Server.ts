/**
 * The task-processing server (asynq's Server), built from the steps: a fetch loop with
 * `concurrency` slots, a task fiber per running task, and background fibers for the lease
 * heartbeat, server state, forwarder, recoverer, janitor, aggregator and health check.
 *
 *   const handle = yield* Server.start(mux, { concurrency: 10, queues: { critical: 6, default: 3, low: 1 } })
 *   ...
 *   yield* handle.shutdown   // or just close the scope
 *
 * Shutdown (asynq's): stop fetching, let running tasks finish for up to `shutdownTimeoutMs`,
 * then stop the rest and put them back at the head of their queue, stop the background fibers
 * and remove the server from asynq:servers / asynq:workers.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import { Broker, type BrokerShape } from "../broker/Broker.js"
import { serveMetrics } from "../observability/metricsEndpoint.js"
import { makeDeadlines } from "./deadlines.js"
import { aggregatorLoop } from "./aggregator.js"
import { fetchLoop } from "./fetcher.js"
import { makeLoopIntake } from "./intake/intake.js"
import { forwarderLoop, makeForwardWake } from "./forwarder.js"
import { healthCheckLoop } from "./healthCheck.js"
import { heartbeatLoop } from "./heartbeat.js"
import { janitorLoop } from "./janitor.js"
import { handlerOf, type HandlerInput } from "./Mux.js"
import { type ResolvedOptions, resolveOptions, type ServerOptions } from "./options.js"
import { recovererLoop } from "./recoverer.js"
import { makeRegistry, type Registry } from "./registry.js"
import { clearServerState, type ServerIdentity, serverStateLoop } from "./serverState.js"
import type { Settled } from "./settle.js"
import { makeSignal } from "./Signal.js"
import { subscribe } from "./subscriber.js"
import { handoverTickLoop } from "./handoverTick.js"
import { receivePushes } from "./pushReceiver.js"
import { makeObserver } from "./workerObserver.js"

/** A running server (`Server.start`): its identity, resolved options, and how to stop it. */
export interface ServerHandle {
  readonly identity: ServerIdentity
  readonly options: ResolvedOptions
  /** Stop taking new tasks; running ones go on (asynq's Stop). */
  readonly stop: Effect.Effect<void>
  /** Graceful shutdown (idempotent; also runs when the scope closes). Returns how many tasks were requeued unfinished. */
  readonly shutdown: Effect.Effect<number>
  /** Tasks running right now. */
  readonly activeCount: () => number
  /** Completes when shutdown has finished. */
  readonly done: Effect.Effect<void>
  /** Where the worker serves its metrics (option `metrics: { port }`), e.g. http://127.0.0.1:9464/metrics. */
  readonly metricsUrl: string | undefined
}

/** Starts a server in the current scope. */
export const start = <R = never>(handler: HandlerInput<R>, options: ServerOptions = {}) =>
  Effect.gen(function* () {
    const resolved = yield* resolveOptions(options)
    // Metrics and attempt spans: an observer only when metrics are on or a tracer is installed.
    const observer = yield* makeObserver({
      metrics: options.metrics !== undefined && options.metrics !== false,
      queues: resolved.queueNames
    })
    const opts: ResolvedOptions = observer ? { ...resolved, observer } : resolved
    const h = observer ? observer.handler(handlerOf(handler)) : handlerOf(handler)
    const broker = yield* Broker
    const served =
      typeof options.metrics === "object" && options.metrics.port !== undefined ? options.metrics : undefined
    // A static import: a dynamic one would be bundled (with effect's Prometheus formatter, and
    // Schema through it) into every bundle that imports the root, even one that never starts a Server.
    const endpoint = served
      ? yield* serveMetrics({ port: served.port!, host: served.host, extra: served.extra })
      : undefined
    if (endpoint) yield* Effect.logInfo(`metrics at ${endpoint.url}`)
    const registry = makeRegistry()
    const wake = makeSignal()
    const slotFreed = makeSignal()
    const identity: ServerIdentity = {
      host: opts.host,
      pid: opts.pid,
      serverId: opts.serverId,
      startedAtMs: yield* Clock.currentTimeMillis
    }
    let status: "active" | "stopped" = "active"

    const attempts = yield* FiberSet.make<Settled, never>()
    const deadlines = yield* makeDeadlines
    // Parking (tasks handed to this worker while it is idle) on a single node or Sentinel: on a
    // Cluster PUBSUB NUMSUB counts only the subscribers of the node that ran it (parking.ts).
    const intake = yield* makeLoopIntake<R>(
      { options: opts, handler: h, registry, broker, deadlines, attempts },
      { wake, slotFreed, parkAs: broker.redis.isCluster ? undefined : identity.serverId }
    )
    const parking = intake.parking
    // The receiver first: a hand-over pushed before its first BLPOP waits in the list.
    if (parking) yield* receivePushes(identity.serverId, opts.queueNames, parking)
    const forwardWake = makeForwardWake()
    yield* subscribe(
      opts.queueNames,
      registry,
      wake,
      parking && { server: identity.serverId, state: parking },
      forwardWake
    )
    const fork = <A, E, X>(eff: Effect.Effect<A, E, X>) => Effect.forkScoped(eff, { startImmediately: true })

    // Heartbeat and server state are stopped last (after the tasks), the others first.
    const heartbeat = yield* fork(heartbeatLoop(registry, opts.leaseMs, opts.heartbeatIntervalMs, observer))
    const state = yield* fork(serverStateLoop(identity, opts, registry, () => status))
    const others = [
      yield* fork(forwarderLoop(opts.queueNames, wake, opts.delayedTaskCheckIntervalMs, forwardWake)),
      yield* fork(recovererLoop(opts)),
      yield* fork(janitorLoop(opts.queueNames, opts.janitorIntervalMs))
    ]
    // Its liveness mark and confirmations while it runs tasks, and the reclaim of stalled workers' hand-overs.
    if (parking)
      others.push(
        yield* fork(
          handoverTickLoop({
            server: identity.serverId,
            queues: opts.queueNames,
            parking,
            registry,
            leaseMs: opts.leaseMs
          })
        )
      )
    if (opts.groupAggregator) others.push(yield* fork(aggregatorLoop(opts, opts.groupAggregator)))
    if (opts.healthCheck) others.push(yield* fork(healthCheckLoop(opts.healthCheck, opts.healthCheckIntervalMs)))
    const fetcher = yield* fork(fetchLoop(intake))
    yield* Effect.logInfo(
      `server ${identity.serverId} started: concurrency ${opts.concurrency}, queues ${JSON.stringify(opts.queues)}${opts.strictPriority ? " (strict)" : ""}`
    )

    const stop = Effect.suspend(() => {
      status = "stopped"
      return Fiber.interrupt(fetcher)
    }).pipe(Effect.asVoid)

    const done = yield* Deferred.make<void>()
    const shutdown = makeShutdown({ opts, identity, registry, attempts, stop, others, heartbeat, state, done, broker })
    yield* Effect.addFinalizer(() => shutdown)

    return {
      identity,
      options: opts,
      stop,
      shutdown,
      activeCount: () => registry.tasks.size,
      done: Deferred.await(done),
      metricsUrl: endpoint?.url
    } satisfies ServerHandle as ServerHandle
  })

/** What a server's shutdown stops, in order: the fetch loop, the tasks, the background fibers, and the server state last. */
interface ShutdownParts {
  readonly opts: ResolvedOptions
  readonly identity: ServerIdentity
  readonly registry: Registry
  readonly attempts: FiberSet.FiberSet<Settled, never>
  /** Stops the fetch loop. */
  readonly stop: Effect.Effect<void>
  readonly others: ReadonlyArray<Fiber.Fiber<unknown, unknown>>
  readonly heartbeat: Fiber.Fiber<unknown, unknown>
  readonly state: Fiber.Fiber<unknown, unknown>
  /** Completed when the shutdown has finished. */
  readonly done: Deferred.Deferred<void>
  readonly broker: BrokerShape
}

/**
 * The graceful shutdown (asynq's): stop fetching, let running tasks finish for up to
 * `shutdownTimeoutMs`, then stop the rest and put them back at the head of their queue, stop the
 * background fibers and remove the server's state. Runs once (a second call waits for the first
 * and returns 0); returns how many tasks were requeued unfinished.
 */
const makeShutdown = (p: ShutdownParts): Effect.Effect<number> => {
  const { opts, registry, attempts } = p
  const drain = Effect.gen(function* () {
    yield* p.stop
    const inFlight = registry.tasks.size
    if (inFlight > 0)
      yield* Effect.logInfo(`shutting down: waiting up to ${opts.shutdownTimeoutMs} ms for ${inFlight} running task(s)`)
    const finished = yield* FiberSet.awaitEmpty(attempts).pipe(
      Effect.as(true),
      Effect.timeoutOrElse({ duration: Duration.millis(opts.shutdownTimeoutMs), orElse: () => Effect.succeed(false) })
    )
    let requeued = 0
    if (!finished) {
      requeued = registry.stopAll("shutdown")
      yield* Effect.logWarning(
        `shutdown timeout: ${requeued} unfinished task(s) stopped and put back at the head of their queue`
      )
      // The requeue writes retry while the lease holds; past that, whatever is left is the recoverer's.
      yield* FiberSet.awaitEmpty(attempts).pipe(
        Effect.timeoutOrElse({ duration: Duration.millis(opts.leaseMs), orElse: () => Effect.void })
      )
    }
    yield* Fiber.interruptAll(p.others)
    yield* Fiber.interrupt(p.heartbeat)
    yield* Fiber.interrupt(p.state)
    yield* clearServerState(p.identity).pipe(
      Effect.catch((e) => Effect.logWarning(`removing server state failed: ${e.message}`))
    )
    yield* Effect.logInfo(`server ${p.identity.serverId} stopped`)
    return requeued
  })
  let started = false
  return Effect.suspend(() => {
    if (started) return Deferred.await(p.done).pipe(Effect.as(0))
    started = true
    return drain.pipe(
      Effect.ensuring(Deferred.succeed(p.done, undefined)),
      Effect.provideService(Broker, p.broker),
      Effect.uninterruptible
    )
  })
}

/** Runs a server until interrupted; interruption (e.g. SIGTERM through runMain) shuts it down gracefully. */
export const serve = <R = never>(handler: HandlerInput<R>, options: ServerOptions = {}) =>
  Effect.scoped(Effect.andThen(start(handler, options), Effect.never))

/** A server as a Layer: started when the layer is built, shut down when its scope closes. */
export const layer = <R = never>(handler: HandlerInput<R>, options: ServerOptions = {}) =>
  Layer.effectDiscard(start(handler, options))
