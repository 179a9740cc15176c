/**
 * `worker <handlers-module>`: the long-lived processor (adapters/worker), mounted in this CLI.
 * Flags are parsed here by effect/cli and handed to the worker adapter, which loads the module,
 * runs until SIGINT/SIGTERM and shuts down gracefully.
 */
import { Effect, Option } from "effect"
import { Argument, Command, Flag, GlobalFlag } from "effect/cli"
import { workerCommand } from "../../worker/cli.js"
import { ExitWith } from "../exitCode.js"
import { redisUrl } from "../globalFlags.js"
import { takeOverSignals } from "../signals.js"

const some = <A>(name: string, o: Option.Option<A>, show: (a: A) => string = String): Array<string> =>
  Option.isSome(o) ? [name, show(o.value)] : []

export const worker = Command.make(
  "worker",
  {
    module: Argument.String("handlers-module").pipe(
      Argument.withDescription("Module exporting `handlers` (or default): a ServeMux, a record of type pattern -> handler, or one function; optionally `options`")
    ),
    concurrency: Flag.Int("concurrency").pipe(Flag.withDescription("Tasks processed at the same time (default: number of CPUs)"), Flag.optional),
    queues: Flag.String("queues").pipe(Flag.withDescription("Queues and weights, e.g. critical=6,default=3,low=1 (default: default=1)"), Flag.optional),
    strict: Flag.Boolean("strict").pipe(Flag.withDescription("Strict priority: higher-weight queues first"), Flag.withDefault(false)),
    shutdownTimeout: Flag.Int("shutdown-timeout").pipe(Flag.withDescription("Ms to wait for running tasks on SIGTERM/SIGINT (default 8000)"), Flag.optional),
    logFormat: Flag.Literals("log-format", ["logfmt", "json", "pretty"] as const).pipe(Flag.withDescription("Log format (default logfmt)"), Flag.optional)
  },
  (a) =>
    Effect.gen(function* () {
      const url = yield* redisUrl
      const level = yield* GlobalFlag.LogLevel
      const argv = [
        a.module,
        "--redis",
        url,
        ...some("--concurrency", a.concurrency),
        ...some("--queues", a.queues),
        ...(a.strict ? ["--strict"] : []),
        ...some("--shutdown-timeout", a.shutdownTimeout),
        ...some("--log-format", a.logFormat),
        ...some("--log-level", level)
      ]
      takeOverSignals()
      const code = yield* Effect.promise(() => workerCommand(argv))
      if (code !== 0) return yield* new ExitWith({ code })
    })
).pipe(Command.withDescription("Run a worker that processes tasks with the handlers of a module (graceful shutdown on SIGTERM/SIGINT)"))
