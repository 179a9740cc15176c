import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { groups } from "../../../src/inspector/groups.js"
import { withBroker } from "../connect.js"
import { table } from "../format.js"
import { emit } from "../output.js"

const ls = Command.make("ls", { queue: Flag.String("queue").pipe(Flag.withDescription("Queue name")) }, ({ queue }) =>
  withBroker(
    Effect.gen(function* () {
      const list = yield* groups(queue)
      yield* emit(
        () => list,
        () =>
          list.length === 0
            ? `No groups in queue "${queue}".`
            : table(
                ["GROUP", "SIZE"],
                list.map((g) => [g.group, g.size])
              )
      )
    })
  )
).pipe(Command.withDescription("List the aggregation groups of a queue with their sizes"))

export const group = Command.make("group").pipe(
  Command.withDescription("Inspect aggregation groups"),
  Command.withSubcommands([ls])
)
