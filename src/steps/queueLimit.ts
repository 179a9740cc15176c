/**
 * A queue's flow-control limit, set and cleared at run time: a rate (GCRA: at most `limit` tasks
 * per `per`, with a `burst`) and/or a concurrency cap, global across every effect-asynq worker. It
 * is kept in Redis (`asynq:{q}:flow`) and applied where tasks are leased (lua/includes/flowLimit.lua):
 * a task over the limit stays pending and takes no worker slot. Go asynq servers run their own
 * dequeue and do not see it.
 */
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"
import { getQueueLimitScript, setQueueLimitScript, type QueueLimitInfo } from "../broker/queueLimit.js"

export type { QueueLimitInfo } from "../broker/queueLimit.js"
import { requireQueue } from "../broker/queues.js"
import { runScript } from "../broker/script.js"
import { wholeAtLeast } from "./validate.js"

/**
 * A rate's period: milliseconds, or a text such as `"1s"`, `"500ms"`, `"1m"`, `"1h"`, `"1 second"`,
 * `"10 minutes"` (a missing number means 1: `"s"` is one second).
 */
export type RatePeriod = number | string

/** A queue's limit as it is given (see `setQueueLimit`). At least a rate or a concurrency cap. */
export interface QueueLimit {
  /** At most `limit` tasks start per `per`, spread evenly (one every `per / limit`). */
  readonly rate?: { readonly limit: number; readonly per: RatePeriod }
  /**
   * With a rate: how many tasks may start at once after a quiet spell. Default: the tasks of 50 ms
   * at the rate, at least 1 (so late wake-ups are caught up and the rate is reached); 1 spaces
   * every task evenly.
   */
  readonly burst?: number
  /** At most this many tasks of the queue active at once, across every worker. */
  readonly concurrency?: number
}

const unitMs: Record<string, number> = {
  ms: 1,
  millis: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000
}

/** A rate period in milliseconds (> 0), or InvalidArgument. */
export const ratePeriodMs = (per: RatePeriod, field = "rate.per"): Effect.Effect<number, InvalidArgument> => {
  let ms = NaN
  if (typeof per === "number") ms = per
  else {
    const m = /^\s*(\d+(?:\.\d+)?)?\s*([a-z]+)\s*$/i.exec(per)
    const unit = m ? unitMs[m[2]!.toLowerCase()] : undefined
    if (m && unit !== undefined) ms = (m[1] === undefined ? 1 : Number(m[1])) * unit
  }
  return Number.isFinite(ms) && ms > 0
    ? Effect.succeed(ms)
    : Effect.fail(
        new InvalidArgument({
          field,
          message: `${field} must be a period such as "1s", "500ms", "1m" or a number of milliseconds > 0, got ${JSON.stringify(per)}`
        })
      )
}

/** A rate written as `<limit>/<period>` (`"100/s"`, `"5/1m"`, `"20/500ms"`), or InvalidArgument. */
export const parseRate = (
  text: string
): Effect.Effect<{ readonly limit: number; readonly per: RatePeriod }, InvalidArgument> => {
  const m = /^\s*(\d+)\s*\/\s*(.+)$/.exec(text)
  if (!m)
    return Effect.fail(
      new InvalidArgument({
        field: "rate",
        message: `rate must be <tasks>/<period>, such as "100/s", "5/1m" or "20/500ms", got ${JSON.stringify(text)}`
      })
    )
  const limit = Number(m[1])
  return Effect.map(ratePeriodMs(m[2]!, "rate"), (perMs) => ({ limit, per: perMs }))
}

/**
 * The burst of a rate given without one: the tasks of 50 ms at that rate, at least 1 (10 for
 * 200/s, 1 up to 20/s). A worker wakes up a little after the time the limit named (a timer's
 * lateness, a round trip); with a burst of 1 every late wake-up is lost for good and the rate is
 * not reached (measured: 190/s for 200/s), while this much lets the next lease catch up. Any one
 * second still holds at most the rate plus the burst.
 */
export const defaultBurst = (limit: number, perMs: number): number => Math.max(1, Math.ceil((limit * 50) / perMs))

/** Checks a limit and works out its stored form. */
export const storedLimit = (limit: QueueLimit): Effect.Effect<QueueLimitInfo, InvalidArgument> =>
  Effect.gen(function* () {
    if (limit.rate === undefined && limit.concurrency === undefined) {
      return yield* new InvalidArgument({
        field: "limit",
        message: "a queue limit needs a rate or a concurrency cap (clearQueueLimit removes a limit)"
      })
    }
    if (limit.rate === undefined && limit.burst !== undefined) {
      return yield* new InvalidArgument({ field: "burst", message: "burst applies to a rate: give a rate with it" })
    }
    const concurrency =
      limit.concurrency === undefined ? undefined : yield* wholeAtLeast("concurrency", limit.concurrency, 1)
    let rate: QueueLimitInfo["rate"]
    if (limit.rate !== undefined) {
      const count = yield* wholeAtLeast("rate.limit", limit.rate.limit, 1)
      const perMs = yield* ratePeriodMs(limit.rate.per)
      const burst = yield* wholeAtLeast("burst", limit.burst ?? defaultBurst(count, perMs), 1)
      rate = { limit: count, perMs, intervalMs: perMs / count, burst }
    }
    return { ...(rate ? { rate } : {}), ...(concurrency !== undefined ? { concurrency } : {}) }
  })

/**
 * Sets a queue's flow-control limit, replacing the one it had (a part not given is removed): from
 * the next dequeue on, every effect-asynq worker leases no more than it allows. QueueNotFound for a
 * queue not in `asynq:queues`; InvalidArgument for a limit that is not one. Returns the limit as stored.
 */
export const setQueueLimit = Effect.fn("Steps.setQueueLimit")(function* (queue: string, limit: QueueLimit) {
  const stored = yield* storedLimit(limit)
  yield* requireQueue(queue)
  yield* runScript(setQueueLimitScript, { queue, limit: stored })
  return stored
})

/** Removes a queue's flow-control limit (the queue is unlimited again; nothing happens when it had none). QueueNotFound for an unknown queue. */
export const clearQueueLimit = Effect.fn("Steps.clearQueueLimit")(function* (queue: string) {
  yield* requireQueue(queue)
  yield* runScript(setQueueLimitScript, { queue, limit: undefined })
})

/** A queue's flow-control limit, or undefined when it has none. */
export const getQueueLimit = Effect.fn("Steps.getQueueLimit")(function* (queue: string) {
  return yield* runScript(getQueueLimitScript, { queue })
})
