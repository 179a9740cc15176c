/**
 * The long-lived worker as a Promise API, for code that does not use Effect:
 *
 *   const worker = await runWorker({ redis: { url: process.env.REDIS_URL }, queues: { default: 1 },
 *     handlers: { "email:deliver": async (task, signal) => { ... } } })
 *   process.once("SIGTERM", () => void worker.shutdown())
 *
 * `shutdown()` is asynq's: stop fetching, wait up to shutdownTimeoutMs for running tasks, put the
 * rest back at the head of their queue, remove the server from asynq:servers, close Redis.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { LogLevel } from "effect/LogLevel"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import * as Server from "../../src/processor/Server.js"
import type { ServerIdentity } from "../../src/processor/serverState.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { brokerLayer, makePromiseRuntime, resolveRedisOptions } from "../../src/runtime/promiseRuntime.js"
import { type LogFormat, loggingLayer } from "./logging.js"
import { otlpLayer, type OtlpOptions } from "../../src/observability/otlp.js"

export interface WorkerConfig extends ServerOptions {
  /** Redis connection (a URL or options); default REDIS_URL, then redis://127.0.0.1:6379. */
  readonly redis?: RedisOptions | string | undefined
  /** A ServeMux, a record of pattern → handler, or one handler for every task. */
  readonly handlers: HandlerInput
  readonly logFormat?: LogFormat
  readonly logLevel?: LogLevel
  /**
   * Export spans (one per attempt) and metrics to an OpenTelemetry collector over OTLP/HTTP:
   * `{ url: "http://collector:4318" }`, or `true` to read the standard OTEL_EXPORTER_OTLP_*
   * variables. Buffered data is sent at shutdown. Metrics are recorded only with `metrics` on.
   */
  readonly otlp?: OtlpOptions | boolean
  /**
   * Any other telemetry layer the worker runs with, e.g. your own `Tracer` (spans per attempt are
   * made whenever a tracer is installed). Closed (and so flushed) at shutdown.
   */
  readonly telemetry?: Layer.Layer<any>
}

export interface WorkerHandle {
  readonly identity: ServerIdentity
  /** Stop taking new tasks (running ones go on). */
  readonly stop: () => Promise<void>
  /** Graceful shutdown, then the Redis connections close. Resolves to the number of tasks requeued unfinished. Idempotent. */
  readonly shutdown: () => Promise<number>
  /** Resolves when the worker has shut down. */
  readonly done: Promise<void>
  /** How many tasks are running now. */
  readonly activeCount: () => number
  /** Where the worker serves its metrics (option `metrics: { port }`). */
  readonly metricsUrl: string | undefined
}

/** The Redis options the worker connects with (see resolveRedisOptions: the facades' one rule). */
export const redisOptionsOf = (redis: RedisOptions | string | undefined): RedisOptions => resolveRedisOptions(redis)

export const runWorker = async (config: WorkerConfig): Promise<WorkerHandle> => {
  const { redis, handlers, logFormat, logLevel, otlp, telemetry, ...options } = config
  const logging = loggingLayer(logFormat, logLevel)
  const base = brokerLayer(redis).pipe(Layer.provideMerge(logging))
  let services: Layer.Layer<any, unknown> = base
  if (otlp !== undefined && otlp !== false)
    services = services.pipe(Layer.provideMerge(otlpLayer(otlp === true ? {} : otlp)))
  if (telemetry !== undefined) services = services.pipe(Layer.provideMerge(telemetry))
  // Everything the worker runs (connect, the server, shutdown, close) logs through `logging`.
  const runtime = makePromiseRuntime(services as typeof base, { wrap: (eff) => Effect.provide(eff, logging) })
  try {
    const handle = await runtime.runScoped(Server.start(handlers, options))
    let closing: Promise<number> | undefined
    let resolveDone!: () => void
    const done = new Promise<void>((r) => (resolveDone = r))
    const shutdown = () => (closing ??= runtime.run(handle.shutdown).finally(runtime.close).finally(resolveDone))
    return {
      identity: handle.identity,
      stop: () => runtime.run(handle.stop),
      shutdown,
      done,
      activeCount: handle.activeCount,
      metricsUrl: handle.metricsUrl
    }
  } catch (e) {
    await runtime.close()
    throw e
  }
}
