/**
 * A queue's flow-control limit, set and cleared at run time: a rate (GCRA: at most `limit` tasks
 * per `per`, with a `burst`) and/or a concurrency cap, global across every effect-asynq worker. It
 * is kept in Redis (`asynq:{q}:flow`) and applied where tasks are leased (lua/includes/flowLimit.lua):
 * a task over the limit stays pending and takes no worker slot. Go asynq servers run their own
 * dequeue and do not see it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"
import {
  getQueueLimitScript,
  queueFlowScript,
  type PerKeyLimitInfo,
  setQueueLimitScript,
  type QueueLimitInfo,
  type StoredRate
} from "../broker/queueLimit.js"

export type { PerKeyLimitInfo, QueueLimitInfo, StoredRate } from "../broker/queueLimit.js"
import { requireQueue } from "../broker/queues.js"
import { runScript } from "../broker/script.js"
import { wholeAtLeast } from "./validate.js"

/**
 * A rate's period: milliseconds, or a text such as `"1s"`, `"500ms"`, `"1m"`, `"1h"`, `"1 second"`,
 * `"10 minutes"` (a missing number means 1: `"s"` is one second).
 */
export type RatePeriod = number | string

/**
 * The per-key parts of a queue's limit, the same for every limit key of the queue (tasks enqueued
 * with `limitKey`): each key's own rate and/or concurrency. At least one of `rate` and `concurrency`.
 */
export interface PerKeyLimit {
  /** At most `limit` tasks of one key start per `per`. */
  readonly rate?: { readonly limit: number; readonly per: RatePeriod }
  /** With a rate: how many tasks of one key may start at once after a quiet spell. Default as for the queue's rate. */
  readonly burst?: number
  /** At most this many tasks of one key active at once, across every worker. */
  readonly concurrency?: number
}

/** A queue's limit as it is given (see `setQueueLimit`). At least a rate, a concurrency cap or a per-key part. */
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
  /** Limits of each limit key (tasks enqueued with `limitKey`); keys are served round robin. */
  readonly perKey?: PerKeyLimit
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

const storedRate = (
  rate: { readonly limit: number; readonly per: RatePeriod },
  burst: number | undefined,
  prefix: string
): Effect.Effect<StoredRate, InvalidArgument> =>
  Effect.gen(function* () {
    if (typeof rate !== "object" || rate === null)
      return yield* new InvalidArgument({
        field: `${prefix}rate`,
        message: `${prefix}rate must be { limit, per }, got ${JSON.stringify(rate)}`
      })
    const count = yield* wholeAtLeast(`${prefix}rate.limit`, rate.limit, 1)
    const perMs = yield* ratePeriodMs(rate.per, `${prefix}rate.per`)
    const b = yield* wholeAtLeast(`${prefix}burst`, burst ?? defaultBurst(count, perMs), 1)
    return { limit: count, perMs, intervalMs: perMs / count, burst: b }
  })

const storedPerKey = (perKey: PerKeyLimit): Effect.Effect<PerKeyLimitInfo, InvalidArgument> =>
  Effect.gen(function* () {
    if (typeof perKey !== "object" || perKey === null)
      return yield* new InvalidArgument({
        field: "perKey",
        message: `perKey must be { rate?, burst?, concurrency? }, got ${JSON.stringify(perKey)}`
      })
    if (perKey.rate === undefined && perKey.burst !== undefined)
      return yield* new InvalidArgument({
        field: "perKey.burst",
        message: "perKey.burst applies to a per-key rate: give perKey.rate with it"
      })
    if (perKey.rate === undefined && perKey.concurrency === undefined)
      return yield* new InvalidArgument({
        field: "perKey",
        message: "a per-key limit needs a rate or a concurrency (leave perKey out for none)"
      })
    const concurrency =
      perKey.concurrency === undefined ? undefined : yield* wholeAtLeast("perKey.concurrency", perKey.concurrency, 1)
    const rate = perKey.rate === undefined ? undefined : yield* storedRate(perKey.rate, perKey.burst, "perKey.")
    return { ...(rate ? { rate } : {}), ...(concurrency !== undefined ? { concurrency } : {}) }
  })

/** Checks a limit and works out its stored form. */
export const storedLimit = (limit: QueueLimit): Effect.Effect<QueueLimitInfo, InvalidArgument> =>
  Effect.gen(function* () {
    if (limit.rate === undefined && limit.concurrency === undefined && limit.perKey === undefined) {
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
    const rate = limit.rate === undefined ? undefined : yield* storedRate(limit.rate, limit.burst, "")
    const perKey = limit.perKey === undefined ? undefined : yield* storedPerKey(limit.perKey)
    return {
      ...(rate ? { rate } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(perKey ? { perKey } : {})
    }
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

/**
 * A queue's flow control now: its limit (undefined: none) and, while a handler's `RateLimited` with
 * `holdQueue` holds the queue, when that hold ends (`heldUntil`; left out when the queue is not held).
 */
export const getQueueFlow = Effect.fn("Steps.getQueueFlow")(function* (queue: string) {
  const { limit, holdUntilMs } = yield* runScript(queueFlowScript, { queue })
  const now = yield* Clock.currentTimeMillis
  const held = holdUntilMs !== undefined && holdUntilMs > now
  return {
    limit,
    ...(held ? { heldUntil: new Date(holdUntilMs) } : {})
  } as { readonly limit: QueueLimitInfo | undefined; readonly heldUntil?: Date }
})
