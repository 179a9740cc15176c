/**
 * `worker <handlers-module>`: the long-lived processor (adapters/worker), mounted in this CLI.
 * Flags are parsed here by effect/cli and handed to the worker adapter, which loads the module,
 * runs until SIGINT/SIGTERM and shuts down gracefully.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { InvalidArgument } from "../../../src/broker/errors.js"
import { parseQueueWeights, type WorkerArgs } from "../../worker/args.js"
import { Argument, Command, Flag, GlobalFlag } from "effect/cli"
import { workerCommand } from "../../worker/cli.js"
import { ExitWith } from "../exitCode.js"
import { explicitRedisTarget } from "../globalFlags.js"
import { parseRedisUrl } from "../redisUrl.js"
import { takeOverSignals } from "../signals.js"

export const worker = Command.make(
  "worker",
  {
    module: Argument.String("handlers-module").pipe(
      Argument.withDescription(
        "Module exporting `handlers` (or default): a ServeMux, a record of type pattern -> handler, or one function; optionally `options`"
      )
    ),
    concurrency: Flag.Int("concurrency").pipe(
      Flag.withDescription("Tasks processed at the same time (default: number of CPUs)"),
      Flag.optional
    ),
    queues: Flag.String("queues").pipe(
      Flag.withDescription("Queues and weights, e.g. critical=6,default=3,low=1 (default: default=1)"),
      Flag.optional
    ),
    strict: Flag.Boolean("strict").pipe(
      Flag.withDescription("Strict priority: higher-weight queues first"),
      Flag.withDefault(false)
    ),
    shutdownTimeout: Flag.Int("shutdown-timeout").pipe(
      Flag.withDescription("Ms to wait for running tasks on SIGTERM/SIGINT (default 8000)"),
      Flag.optional
    ),
    logFormat: Flag.Literals("log-format", ["logfmt", "json", "pretty"] as const).pipe(
      Flag.withDescription("Log format (default logfmt)"),
      Flag.optional
    ),
    metricsPort: Flag.Int("metrics-port").pipe(
      Flag.withDescription("Serve Prometheus metrics at http://<metrics-host>:<port>/metrics"),
      Flag.optional
    ),
    metricsHost: Flag.String("metrics-host").pipe(
      Flag.withDescription(
        "Address of the metrics endpoint (default 127.0.0.1; 0.0.0.0 for a scraper on another host)"
      ),
      Flag.optional
    ),
    otlpEndpoint: Flag.String("otlp-endpoint").pipe(
      Flag.withDescription(
        "Export spans and metrics over OTLP/HTTP to this collector, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT when set)"
      ),
      Flag.optional
    )
  },
  (a) =>
    Effect.gen(function* () {
      // Only a connection the flags name; else the worker uses the module's options.redis, then REDIS_URL.
      const redis = yield* explicitRedisTarget
      // $REDIS_URL is checked as the other commands check it (a usage error naming the expected
      // form, before the module loads), though the module's options.redis wins over it.
      const envUrl = process.env.REDIS_URL
      if (Option.isNone(redis) && envUrl !== undefined && envUrl !== "") yield* parseRedisUrl("REDIS_URL", envUrl)
      const level = yield* GlobalFlag.LogLevel
      let queues: Record<string, number> | undefined
      if (Option.isSome(a.queues)) {
        const parsed = parseQueueWeights(a.queues.value)
        if (!parsed.ok) return yield* new InvalidArgument({ field: "queues", message: parsed.error })
        queues = parsed.queues
      }
      const args: WorkerArgs = {
        handlersModule: a.module,
        ...(Option.isSome(redis) ? { redis: redis.value } : {}),
        ...(Option.isSome(a.concurrency) ? { concurrency: a.concurrency.value } : {}),
        ...(queues ? { queues } : {}),
        ...(a.strict ? { strictPriority: true } : {}),
        ...(Option.isSome(a.shutdownTimeout) ? { shutdownTimeoutMs: a.shutdownTimeout.value } : {}),
        ...(Option.isSome(a.logFormat) ? { logFormat: a.logFormat.value } : {}),
        ...(Option.isSome(a.metricsPort) ? { metricsPort: a.metricsPort.value } : {}),
        ...(Option.isSome(a.metricsHost) ? { metricsHost: a.metricsHost.value } : {}),
        ...(Option.isSome(a.otlpEndpoint) ? { otlpEndpoint: a.otlpEndpoint.value } : {}),
        ...(Option.isSome(level) ? { logLevel: level.value } : {})
      }
      takeOverSignals()
      const code = yield* Effect.promise(() => workerCommand(args))
      if (code !== 0) return yield* new ExitWith({ code })
    })
).pipe(
  Command.withDescription(
    "Run a worker that processes tasks with the handlers of a module (graceful shutdown on SIGTERM/SIGINT)"
  )
)
