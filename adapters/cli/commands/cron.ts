import * as Effect from "effect/Effect"
import { Argument, Command, Flag } from "effect/cli"
import { schedulerEntries, schedulerHistory } from "../../../src/inspector/scheduler.js"
import { withBroker } from "../connect.js"
import { table, time } from "../format.js"
import { emit } from "../output.js"

const ls = Command.make("ls", {}, () =>
  withBroker(
    Effect.gen(function* () {
      const entries = yield* schedulerEntries()
      yield* emit(
        () => entries,
        () =>
          entries.length === 0
            ? "No scheduler entries."
            : table(
                ["ENTRY ID", "SPEC", "TYPE", "NEXT", "PREV", "OPTIONS"],
                entries.map((e) => [e.id, e.spec, e.taskType, time(e.next), time(e.prev), e.options.join(", ")])
              )
      )
    })
  )
).pipe(Command.withDescription("List the periodic tasks of running schedulers, soonest first"))

const historyCmd = Command.make(
  "history",
  {
    entry: Argument.String("entry-id").pipe(Argument.withDescription("Scheduler entry id (see cron ls)")),
    page: Flag.Int("page").pipe(Flag.withDefault(1)),
    size: Flag.Int("size").pipe(Flag.withDefault(30))
  },
  ({ entry, page, size }) =>
    withBroker(
      Effect.gen(function* () {
        const events = yield* schedulerHistory(entry, { page, pageSize: size })
        yield* emit(
          () => events,
          () =>
            events.length === 0
              ? `No enqueue events for entry "${entry}".`
              : table(
                  ["ENQUEUED AT", "TASK ID"],
                  events.map((e) => [time(e.enqueuedAt), e.taskId])
                )
        )
      })
    )
).pipe(Command.withDescription("What a scheduler entry enqueued, newest first"))

export const cron = Command.make("cron").pipe(
  Command.withDescription("Inspect periodic tasks"),
  Command.withSubcommands([ls, historyCmd])
)
