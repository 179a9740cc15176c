/** What `effect-asynq worker` runs with (parsed by effect/cli in adapters/cli/commands/worker.ts). */
import type { LogLevel } from "effect/LogLevel"
import type { RedisOptions } from "../../src/redis/options.js"
import type { LogFormat } from "./logging.js"

/** What the `effect-asynq worker` command was given: the handlers module and the flags. */
export interface WorkerArgs {
  readonly handlersModule: string
  /**
   * The Redis the command line named (--redis-url, --redis-cluster, --redis-sentinel). It wins over
   * the handlers module's `options.redis`, which wins over REDIS_URL.
   */
  readonly redis?: RedisOptions | string
  readonly concurrency?: number
  readonly queues?: Record<string, number>
  readonly strictPriority?: boolean
  readonly shutdownTimeoutMs?: number
  readonly logFormat?: LogFormat
  readonly logLevel?: LogLevel
  /** Serve Prometheus metrics at http://<metricsHost>:<metricsPort>/metrics. */
  readonly metricsPort?: number
  /** The address for the metrics endpoint (default 127.0.0.1). */
  readonly metricsHost?: string
  /** Export spans and metrics over OTLP/HTTP to this collector base URL (else the OTEL_EXPORTER_OTLP_* variables, when set). */
  readonly otlpEndpoint?: string
}

/**
 * Parses `critical=6,default=3,low` (a missing weight is 1) into queue weights, or says what is
 * wrong with the first bad pair.
 */
export const parseQueueWeights = (
  text: string
): { ok: true; queues: Record<string, number> } | { ok: false; error: string } => {
  const queues: Record<string, number> = {}
  for (const part of text.split(",")) {
    const [name, w = "1", ...extra] = part.split("=")
    const weight = Number(w)
    if (!name || extra.length > 0 || !Number.isInteger(weight) || weight < 1) {
      return {
        ok: false,
        error: `--queues expects name=weight pairs with whole weights >= 1, like critical=6,default=3; got "${part}"`
      }
    }
    queues[name.trim()] = weight
  }
  return { ok: true, queues }
}
