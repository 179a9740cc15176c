import * as Effect from "effect/Effect"
import { Command } from "effect/cli"
import { servers } from "../../../src/inspector/servers.js"
import { withBroker } from "../connect.js"
import { table, time } from "../format.js"
import { emit } from "../output.js"

const ls = Command.make("ls", {}, () =>
  withBroker(
    Effect.gen(function* () {
      const list = yield* servers()
      yield* emit(
        () => list,
        () =>
          list.length === 0
            ? "No running servers."
            : table(
                ["HOST", "PID", "STATUS", "ACTIVE", "QUEUES", "STARTED", "ID"],
                list.map((s) => [
                  s.host,
                  s.pid,
                  s.status,
                  `${s.activeWorkers.length}/${s.concurrency}`,
                  Object.entries(s.queues)
                    .sort(([, a], [, b]) => b - a)
                    .map(([q, w]) => `${q}:${w}`)
                    .join(",") + (s.strictPriority ? " (strict)" : ""),
                  time(s.started),
                  s.serverId
                ])
              )
      )
    })
  )
).pipe(Command.withDescription("List running servers (Go asynq's and effect-asynq's) with their active workers"))

export const server = Command.make("server").pipe(
  Command.withDescription("Inspect servers"),
  Command.withSubcommands([ls])
)
