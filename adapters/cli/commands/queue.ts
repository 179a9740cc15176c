import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Option from "effect/Option"
import { InvalidArgument } from "../../../src/broker/errors.js"
import { requireQueue } from "../../../src/broker/queues.js"
import {
  clearQueueLimit,
  getQueueFlow,
  pauseQueue,
  setQueueLimit,
  unpauseQueue
} from "../../../src/inspector/control.js"
import { parseRate, type QueueLimitInfo } from "../../../src/steps/queueLimit.js"
import { deleteQueue } from "../../../src/inspector/deleteQueue.js"
import { history } from "../../../src/inspector/history.js"
import { getQueueInfo } from "../../../src/inspector/queueInfo.js"
import { queues } from "../../../src/inspector/queues.js"
import { withBroker } from "../connect.js"
import { bytes, duration, fields, table, time } from "../format.js"
import { emit, progressLine } from "../output.js"

const queueArg = Argument.String("queue").pipe(Argument.withDescription("Queue name"))

const ls = Command.make("ls", {}, () =>
  withBroker(
    Effect.gen(function* () {
      const names = yield* queues()
      yield* emit(
        () => names,
        () => names.join("\n")
      )
    })
  )
).pipe(Command.withDescription("List queue names"))

const inspect = Command.make("inspect", { queue: queueArg }, ({ queue }) =>
  withBroker(
    Effect.gen(function* () {
      const i = yield* getQueueInfo(queue)
      yield* emit(
        () => i,
        () =>
          fields([
            ["queue", i.queue],
            ["paused", i.paused],
            ["limit", limitText(i.limit)],
            ["held", heldText(i.heldUntil, i.timestamp)],
            ["size", i.size],
            ["pending", i.pending],
            ["active", i.active],
            ["scheduled", i.scheduled],
            ["retry", i.retry],
            ["archived", i.archived],
            ["completed", i.completed],
            ["aggregating", i.aggregating],
            ["groups", i.groups],
            ["processed today", i.processed],
            ["failed today", i.failed],
            ["processed total", i.processedTotal],
            ["failed total", i.failedTotal],
            ["latency", duration(i.latencyMs)],
            ["memory", bytes(i.memoryUsage)],
            ["at", time(i.timestamp)]
          ])
      )
    })
  )
).pipe(Command.withDescription("Show one queue in detail"))

const historyCmd = Command.make(
  "history",
  {
    queue: queueArg,
    days: Flag.Int("days").pipe(Flag.withDescription("Number of days, 1 to 90"), Flag.withDefault(7))
  },
  ({ queue, days }) =>
    withBroker(
      Effect.gen(function* () {
        const rows = yield* history(queue, days)
        yield* emit(
          () => rows,
          () =>
            table(
              ["DATE", "PROCESSED", "FAILED", "ERROR RATE"],
              rows.map((d) => [
                d.date.toISOString().slice(0, 10),
                d.processed,
                d.failed,
                d.processed === 0 ? "-" : `${((100 * d.failed) / d.processed).toFixed(1)}%`
              ])
            )
        )
      })
    )
).pipe(Command.withDescription("Processed and failed counts of the last days (UTC), today first"))

const pause = Command.make("pause", { queue: queueArg }, ({ queue }) =>
  withBroker(
    Effect.andThen(
      pauseQueue(queue),
      emit(
        () => ({ queue, paused: true }),
        () => `Paused queue "${queue}".`
      )
    )
  )
).pipe(Command.withDescription("Stop workers from taking tasks of a queue"))

const unpause = Command.make("unpause", { queue: queueArg }, ({ queue }) =>
  withBroker(
    Effect.andThen(
      unpauseQueue(queue),
      emit(
        () => ({ queue, paused: false }),
        () => `Resumed queue "${queue}".`
      )
    )
  )
).pipe(Command.withDescription("Resume a paused queue"))

const rm = Command.make(
  "rm",
  {
    queue: queueArg,
    force: Flag.Boolean("force").pipe(
      Flag.withDescription("Delete the queue's tasks too (never while tasks are active)"),
      Flag.withDefault(false)
    )
  },
  ({ queue, force }) =>
    withBroker(
      Effect.gen(function* () {
        const progress = progressLine("deleted")
        const r = yield* deleteQueue(queue, { force, onProgress: progress.onProgress }).pipe(
          Effect.ensuring(Effect.sync(progress.finish))
        )
        yield* emit(
          () => ({ queue, deleted: true, deletedTasks: r.deletedTasks }),
          () => `Deleted queue "${queue}"${r.deletedTasks > 0 ? ` and its ${r.deletedTasks} task(s)` : ""}.`
        )
      })
    )
).pipe(Command.withDescription("Delete a queue (refused when it holds tasks, unless --force)"))

const periodText = (ms: number) => (ms === 1000 ? "s" : ms === 60_000 ? "m" : ms === 3_600_000 ? "h" : `${ms}ms`)

/**
 * A queue's flow-control limit in one line: `100/s (burst 1), concurrency 5`, with its per-key
 * parts (`per key: 10/s (burst 1), concurrency 2`), or `none`.
 */
export const limitText = (limit: QueueLimitInfo | undefined): string => {
  if (!limit) return "none"
  const parts = rateAndCap(limit)
  if (limit.perKey) parts.push(`per key: ${rateAndCap(limit.perKey).join(", ")}`)
  return parts.join(", ")
}

/**
 * A queue's hold (`RateLimited` with `holdQueue`) in one line: `until <ISO time> (in
 * 30s)`, or `no` when it is not held.
 */
export const heldText = (heldUntil: Date | undefined, now: Date): string =>
  heldUntil === undefined
    ? "no"
    : `until ${heldUntil.toISOString()} (in ${duration(heldUntil.getTime() - now.getTime())})`

/** A rate and a concurrency cap (the queue's, or each key's) as `100/s (burst 1)`, `concurrency 5`. */
const rateAndCap = (limit: Pick<QueueLimitInfo, "rate" | "concurrency">): Array<string> => {
  const parts: Array<string> = []
  if (limit.rate) parts.push(`${limit.rate.limit}/${periodText(limit.rate.perMs)} (burst ${limit.rate.burst})`)
  if (limit.concurrency !== undefined) parts.push(`concurrency ${limit.concurrency}`)
  return parts
}

const limitCmd = Command.make(
  "limit",
  {
    queue: queueArg,
    rate: Flag.String("rate").pipe(
      Flag.withDescription("At most this many tasks per period, across all workers: 100/s, 5/1m, 20/500ms"),
      Flag.optional
    ),
    burst: Flag.Int("burst").pipe(
      Flag.withDescription("With --rate: tasks that may start at once after a quiet spell (default 1)"),
      Flag.optional
    ),
    concurrency: Flag.Int("concurrency").pipe(
      Flag.withDescription("At most this many tasks of the queue active at once, across all workers"),
      Flag.optional
    ),
    keyRate: Flag.String("key-rate").pipe(
      Flag.withDescription("At most this many tasks of one limit key per period, across all workers: 10/s, 60/1m"),
      Flag.optional
    ),
    keyBurst: Flag.Int("key-burst").pipe(
      Flag.withDescription("With --key-rate: tasks of one key that may start at once after a quiet spell"),
      Flag.optional
    ),
    keyConcurrency: Flag.Int("key-concurrency").pipe(
      Flag.withDescription("At most this many tasks of one limit key active at once, across all workers"),
      Flag.optional
    ),
    clear: Flag.Boolean("clear").pipe(Flag.withDescription("Remove the queue's limit"), Flag.withDefault(false))
  },
  ({ queue, rate, burst, concurrency, keyRate, keyBurst, keyConcurrency, clear }) =>
    withBroker(
      Effect.gen(function* () {
        const keyGiven = Option.isSome(keyRate) || Option.isSome(keyBurst) || Option.isSome(keyConcurrency)
        const given = Option.isSome(rate) || Option.isSome(burst) || Option.isSome(concurrency) || keyGiven
        if (clear) {
          if (given)
            return yield* new InvalidArgument({
              field: "clear",
              message: "--clear takes no --rate, --burst, --concurrency, --key-rate, --key-burst or --key-concurrency"
            })
          yield* clearQueueLimit(queue)
          return yield* emit(
            () => ({ queue, limit: null }),
            () => `Cleared the limit of queue "${queue}": it is unlimited.`
          )
        }
        if (!given) {
          yield* requireQueue(queue)
          const { limit: current, heldUntil } = yield* getQueueFlow(queue)
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* emit(
            () => ({ queue, limit: current ?? null, ...(heldUntil ? { heldUntil: heldUntil.toISOString() } : {}) }),
            () =>
              `Queue "${queue}": limit ${limitText(current)}${heldUntil ? `; held ${heldText(heldUntil, now)}` : ""}.`
          )
        }
        const parsed = Option.isSome(rate) ? yield* parseRate(rate.value) : undefined
        const keyParsed = Option.isSome(keyRate)
          ? yield* parseRate(keyRate.value).pipe(
              Effect.mapError(
                (e) => new InvalidArgument({ field: "key-rate", message: e.message.replace(/^rate/, "key-rate") })
              )
            )
          : undefined
        const stored = yield* setQueueLimit(queue, {
          ...(parsed ? { rate: parsed } : {}),
          ...(Option.isSome(burst) ? { burst: burst.value } : {}),
          ...(Option.isSome(concurrency) ? { concurrency: concurrency.value } : {}),
          ...(keyGiven
            ? {
                perKey: {
                  ...(keyParsed ? { rate: keyParsed } : {}),
                  ...(Option.isSome(keyBurst) ? { burst: keyBurst.value } : {}),
                  ...(Option.isSome(keyConcurrency) ? { concurrency: keyConcurrency.value } : {})
                }
              }
            : {})
        })
        yield* emit(
          () => ({ queue, limit: stored }),
          () => `Queue "${queue}": limit ${limitText(stored)}.`
        )
      })
    )
).pipe(
  Command.withDescription(
    "Show or set a queue's flow-control limit (--rate, --burst, --concurrency, and per limit key --key-rate, --key-burst, --key-concurrency; replaces the limit it had), or remove it (--clear). Applied by effect-asynq workers only: Go asynq servers do not see it"
  )
)

export const queue = Command.make("queue").pipe(
  Command.withDescription("Manage queues"),
  Command.withSubcommands([ls, inspect, historyCmd, pause, unpause, limitCmd, rm])
)
