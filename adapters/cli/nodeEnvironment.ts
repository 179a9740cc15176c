/**
 * The services effect/cli needs (Command.Environment), built on Node's own process streams:
 * a stand-in for @effect/platform-node, which requires Node >= 22. The CLI reads no files and
 * spawns no processes, so those two services refuse to be used.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Terminal from "effect/Terminal"
import { ChildProcessSpawner } from "effect/process"

const write = (stream: NodeJS.WriteStream) => () =>
  Sink.forEach((chunk: string | Uint8Array) =>
    Effect.sync(() => {
      stream.write(chunk)
    })
  )

export const nodeEnvironment = Layer.mergeAll(
  FileSystem.layerNoop({}),
  Path.layer,
  Layer.succeed(
    Stdio.Stdio,
    Stdio.make({
      args: Effect.sync(() => process.argv.slice(2)),
      stdout: write(process.stdout),
      stderr: write(process.stderr),
      stdin: Stream.empty,
      stdinIsTerminal: Effect.sync(() => process.stdin.isTTY === true),
      stdoutIsTerminal: Effect.sync(() => process.stdout.isTTY === true),
      stderrIsTerminal: Effect.sync(() => process.stderr.isTTY === true)
    })
  ),
  Layer.succeed(
    Terminal.Terminal,
    Terminal.make({
      columns: Effect.sync(() => process.stdout.columns ?? 100),
      rows: Effect.sync(() => process.stdout.rows ?? 24),
      size: Effect.die("effect-asynq does not follow terminal resizes"),
      readInput: Effect.die("effect-asynq reads no interactive input"),
      readLine: Effect.die("effect-asynq reads no interactive input"),
      display: (text) =>
        Effect.sync(() => {
          process.stdout.write(text)
        })
    })
  ),
  Layer.succeed(
    ChildProcessSpawner.ChildProcessSpawner,
    ChildProcessSpawner.make(() => Effect.die("effect-asynq spawns no processes"))
  )
)
