/**
 * `effect-asynq worker <handlers-module>`: loads the handlers module, runs a worker until SIGTERM
 * or SIGINT, then shuts down gracefully (running tasks get shutdownTimeout, the rest are
 * requeued) and resolves with the exit code. Logs go through Effect's Logger.
 *
 * The command line is parsed by the CLI (adapters/cli/commands/worker.ts, `effect-asynq worker`);
 * this runs it from the parsed arguments.
 */
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import { ServeMux } from "../../src/processor/Mux.js"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import type { RedisOptions } from "../../src/redis/options.js"
import type { WorkerArgs } from "./args.js"
import { loggingLayer } from "./logging.js"
import { runWorker, type WorkerHandle } from "./runWorker.js"
import { queueMetricsText } from "../../src/observability/queueMetrics.js"

const isHandlerInput = (u: unknown): u is HandlerInput =>
  u instanceof ServeMux ||
  typeof u === "function" ||
  (typeof u === "object" && u !== null && Object.values(u).every((v) => typeof v === "function"))

/** What a handlers module may export as `options`: server options, and where Redis is. */
export interface HandlersModuleOptions extends ServerOptions {
  /** Used when the command line names no Redis; REDIS_URL is used when neither does. */
  readonly redis?: RedisOptions | string
}

/** Loads `{ handlers, options }` from a module path (relative to the working directory). */
export const loadHandlersModule = async (
  path: string
): Promise<{ handlers: HandlerInput; options: HandlersModuleOptions }> => {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>
  const handlers = mod.handlers ?? mod.default
  if (!isHandlerInput(handlers)) {
    throw new Error(
      `${path} must export its handlers as "handlers" or "default": a ServeMux, a record of pattern -> function, or a function`
    )
  }
  const options = (typeof mod.options === "object" && mod.options !== null ? mod.options : {}) as HandlersModuleOptions
  return { handlers, options }
}

/**
 * Why the handlers module did not load, as one line for a shell user: the module path and the
 * error's message (its first line; "imported from" this loader's own file left out: the user did not
 * write that import).
 */
export const loadFailure = (path: string, error: unknown): string => {
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!
  return `effect-asynq: cannot load the handlers module ${path}: ${message.replace(` imported from ${fileURLToPath(import.meta.url)}`, "")}`
}

/**
 * Runs the worker command; resolves with the process exit code (0 after a graceful shutdown).
 * SIGTERM/SIGINT are handled from the start: one that arrives while the handlers module loads or
 * the worker connects is kept, and the worker is shut down (or not started) as soon as it can be.
 */
export const workerCommand = async (a: WorkerArgs): Promise<number> => {
  const log = (level: "Info" | "Error", message: string) =>
    Effect.runPromise(
      (level === "Info" ? Effect.logInfo(message) : Effect.logError(message)).pipe(
        Effect.provide(loggingLayer(a.logFormat, a.logLevel))
      )
    )
  let stopSignal: NodeJS.Signals | undefined
  let worker: WorkerHandle | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    process.removeListener("SIGTERM", onSignal)
    process.removeListener("SIGINT", onSignal)
    stopSignal = signal
    const w = worker
    if (w) void log("Info", `${signal} received: shutting down gracefully`).then(() => w.shutdown())
  }
  process.once("SIGTERM", onSignal)
  process.once("SIGINT", onSignal)
  const release = () => {
    process.removeListener("SIGTERM", onSignal)
    process.removeListener("SIGINT", onSignal)
  }
  let loaded: Awaited<ReturnType<typeof loadHandlersModule>>
  try {
    loaded = await loadHandlersModule(a.handlersModule)
  } catch (e) {
    release()
    process.stderr.write(`${loadFailure(a.handlersModule, e)}\n`)
    return 1
  }
  if (stopSignal !== undefined) {
    await log("Info", `${stopSignal} received before the worker started: not starting it`)
    return 0
  }
  const overrides: ServerOptions = {
    ...(a.concurrency !== undefined ? { concurrency: a.concurrency } : {}),
    ...(a.queues !== undefined ? { queues: a.queues } : {}),
    ...(a.strictPriority !== undefined ? { strictPriority: a.strictPriority } : {}),
    ...(a.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: a.shutdownTimeoutMs } : {})
  }
  // Where Redis is: the command line's flags, else the module's options.redis, else REDIS_URL (runWorker).
  const { redis: moduleRedis, ...moduleOptions } = loaded.options
  const redis = a.redis ?? moduleRedis
  // --metrics-port serves the worker metrics and, after them, asynq's queue metrics read from Redis
  // at each scrape (the module's own `metrics.extra` replaces those).
  const moduleMetrics = typeof moduleOptions.metrics === "object" ? moduleOptions.metrics : {}
  const metrics =
    a.metricsPort !== undefined
      ? {
          extra: queueMetricsText(),
          ...moduleMetrics,
          port: a.metricsPort,
          ...(a.metricsHost !== undefined ? { host: a.metricsHost } : {})
        }
      : undefined
  // --otlp-endpoint, else the standard OpenTelemetry variables when one names an endpoint.
  const env = process.env
  const otlp =
    a.otlpEndpoint !== undefined
      ? { url: a.otlpEndpoint }
      : env.OTEL_EXPORTER_OTLP_ENDPOINT ||
          env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
          env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
        ? true
        : undefined
  try {
    worker = await runWorker({
      ...moduleOptions,
      ...overrides,
      ...(metrics !== undefined ? { metrics } : {}),
      ...(otlp !== undefined ? { otlp } : {}),
      handlers: loaded.handlers,
      ...(redis !== undefined ? { redis } : {}),
      ...(a.logFormat !== undefined ? { logFormat: a.logFormat } : {}),
      ...(a.logLevel !== undefined ? { logLevel: a.logLevel } : {})
    })
  } catch (e) {
    release()
    await log("Error", `worker failed to start: ${e instanceof Error ? e.message : String(e)}`)
    return 1
  }
  if (stopSignal !== undefined) {
    await log("Info", `${stopSignal} received while the worker started: shutting down gracefully`)
    await worker.shutdown()
  }
  await worker.done
  return 0
}
