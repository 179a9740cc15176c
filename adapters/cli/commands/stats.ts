import * as Effect from "effect/Effect"
import { Command } from "effect/cli"
import { getQueueInfo } from "../../../src/inspector/queueInfo.js"
import { queues } from "../../../src/inspector/queues.js"
import { withBroker } from "../connect.js"
import { bytes, duration, table } from "../format.js"
import { emit } from "../output.js"

/** `stats`: every queue with its sizes per state, today's counters, latency and memory. */
export const stats = Command.make("stats", {}, () =>
  withBroker(
    Effect.gen(function* () {
      const names = yield* queues()
      const infos = yield* Effect.forEach(names, (q) => getQueueInfo(q))
      yield* emit(
        () => infos,
        () =>
          infos.length === 0
            ? "No queues."
            : table(
                [
                  "QUEUE",
                  "STATE",
                  "SIZE",
                  "PENDING",
                  "ACTIVE",
                  "SCHEDULED",
                  "RETRY",
                  "ARCHIVED",
                  "COMPLETED",
                  "AGGREGATING",
                  "PROCESSED",
                  "FAILED",
                  "LATENCY",
                  "MEMORY"
                ],
                infos.map((i) => [
                  i.queue,
                  i.paused ? "paused" : "run",
                  i.size,
                  i.pending,
                  i.active,
                  i.scheduled,
                  i.retry,
                  i.archived,
                  i.completed,
                  i.aggregating,
                  i.processed,
                  i.failed,
                  duration(i.latencyMs),
                  bytes(i.memoryUsage)
                ])
              ) + "\n(PROCESSED and FAILED: today, UTC)"
      )
    })
  )
).pipe(Command.withDescription("Show every queue: tasks per state, today's processed/failed, latency, memory"))
