#!/usr/bin/env node
/**
 * effect-asynq: inspect and administer asynq queues (Go asynq's and effect-asynq's) from a shell.
 * Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { CliConfig, Command, GlobalFlag } from "effect/cli"
import { cron } from "./commands/cron.js"
import { dash } from "./commands/dash.js"
import { group } from "./commands/group.js"
import { queue } from "./commands/queue.js"
import { server } from "./commands/server.js"
import { stats } from "./commands/stats.js"
import { task } from "./commands/task.js"
import { worker } from "./commands/worker.js"
import { workflow } from "./commands/workflow.js"
import { outcome } from "./exitCode.js"
import { connectionFlags, Json } from "./globalFlags.js"
import { nodeEnvironment } from "./nodeEnvironment.js"
import { visible } from "./output.js"
import { presenterLayer } from "./presenter.js"
import { signalsTakenOver } from "./signals.js"

const version = "0.1.0"

export const app = Command.make("effect-asynq").pipe(
  Command.withDescription("Inspect and manage asynq task queues on Redis (wire-compatible with Go asynq)"),
  Command.withSubcommands([stats, queue, group, task, workflow, server, cron, worker, dash]),
  Command.withGlobalFlags([...connectionFlags, Json])
)

const args = process.argv.slice(2)

// effect/cli's built-in flags, less --wizard: it needs an interactive terminal reader, which this CLI
// does not have (see nodeEnvironment.ts), so it is neither listed in --help nor accepted.
const cliConfig = CliConfig.layer({ builtIns: GlobalFlag.BuiltIns.filter((flag) => flag !== GlobalFlag.Wizard) })

// stdout carries the command's output (tables, --json); library log lines (warnings) go to stderr.
const program = Command.runWith(app, { version })(args).pipe(
  Effect.provide(Layer.mergeAll(nodeEnvironment, presenterLayer, cliConfig)),
  Effect.provideService(Logger.LogToStderr, true)
)

const fiber = Effect.runFork(program)
const interrupt = () => {
  if (signalsTakenOver()) return
  process.off("SIGINT", interrupt)
  process.off("SIGTERM", interrupt)
  Effect.runFork(Fiber.interrupt(fiber))
}
process.once("SIGINT", interrupt)
process.once("SIGTERM", interrupt)
fiber.addObserver((exit) => {
  const { code, message } = outcome(exit)
  if (message !== undefined) process.stderr.write(`effect-asynq: ${visible(message)}\n`)
  process.exitCode = code
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
})
