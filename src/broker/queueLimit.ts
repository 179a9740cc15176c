/**
 * A queue's flow-control limit (not asynq's): the hash `asynq:{q}:flow` the lease scripts read
 * (lua/includes/flowLimit.lua). Written and cleared by `setQueueLimit`, read by `getQueueLimit`.
 */
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { utf8Text } from "./fields.js"
import { defineScript } from "./script.js"
import { getQueueLimitLua, setQueueLimitLua } from "../redis/lua.generated.js"

/** A rate as stored: the rate as given, the interval between two tasks and the burst. */
export interface StoredRate {
  /** Tasks per period, as given. */
  readonly limit: number
  /** The period, ms, as given. */
  readonly perMs: number
  /** Time between two tasks, ms (`perMs / limit`). */
  readonly intervalMs: number
  /** Tasks the rate lets start at once after a quiet spell. */
  readonly burst: number
}

/** The per-key parts of a queue's limit as stored: the same rate and/or concurrency for every limit key of the queue. */
export interface PerKeyLimitInfo {
  /** Each key's own rate (lua/includes/keyLimits.lua). */
  readonly rate?: StoredRate
  /** At most this many tasks of one key active at once, across every worker. */
  readonly concurrency?: number
}

/** A queue's flow-control limit as stored and shown (queue info, the CLI, /metrics): a rate (interval between tasks, burst, and the rate as given) and/or a concurrency cap, and per-key parts. */
export interface QueueLimitInfo {
  readonly rate?: StoredRate
  /** At most this many tasks of the queue active at once, across every worker. */
  readonly concurrency?: number
  /** Limits each limit key of the queue has (tasks enqueued with `limitKey`). */
  readonly perKey?: PerKeyLimitInfo
}

/** Script `setQueueLimit`: replaces the queue's limit (`undefined`: clears it, the queue is unlimited). */
export const setQueueLimitScript = defineScript<
  { readonly queue: string; readonly limit: QueueLimitInfo | undefined },
  void
>({
  name: "setQueueLimit",
  source: setQueueLimitLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).flow],
  args: ({ limit }) => {
    const rate = limit?.rate
    const args: Array<string | number> = [
      rate ? rate.intervalMs : "",
      rate ? rate.burst : "",
      rate ? rate.limit : "",
      rate ? rate.perMs : "",
      limit?.concurrency ?? ""
    ]
    const perKey = limit?.perKey
    if (perKey !== undefined) {
      const kr = perKey.rate
      args.push(
        kr ? kr.intervalMs : "",
        kr ? kr.burst : "",
        kr ? kr.limit : "",
        kr ? kr.perMs : "",
        perKey.concurrency ?? ""
      )
    }
    return args
  },
  decode: (reply) => Result.map(integerReply("setQueueLimit", reply), () => undefined)
})

const num = (v: unknown): number | undefined => {
  if (typeof v !== "string" && !(v instanceof Uint8Array)) return undefined
  const n = Number(typeof v === "string" ? v : utf8Text(v))
  return Number.isFinite(n) ? n : undefined
}

const storedRate = (
  limit: number | undefined,
  perMs: number | undefined,
  burst: number | undefined,
  intervalMs: number | undefined
): StoredRate | undefined =>
  limit !== undefined && perMs !== undefined && burst !== undefined && intervalMs !== undefined
    ? { limit, perMs, intervalMs, burst }
    : undefined

/** A queue's flow control as read: its limit (undefined: none) and its hold (`RateLimited` with `holdQueue`), unix ms (undefined: never held or the hold was cleared). */
export interface QueueFlowState {
  readonly limit: QueueLimitInfo | undefined
  /** When the queue's hold ends (unix ms, the worker's clock that wrote it); it may be past. */
  readonly holdUntilMs: number | undefined
}

/** Script `getQueueLimit` read whole: the queue's limit and its hold (fields that do not read as numbers are left out). */
export const queueFlowScript = defineScript<{ readonly queue: string }, QueueFlowState>({
  name: "getQueueLimit",
  source: getQueueLimitLua,
  buffers: false,
  keys: ({ queue }) => [queueKeys(queue).flow],
  args: () => [],
  decode: (reply) => {
    if (!Array.isArray(reply) || reply.length !== 12)
      return Result.fail(unexpectedReply("getQueueLimit", reply, "an array of twelve fields"))
    const holdUntilMs = num(reply[11])
    const [
      rateLimit,
      perMs,
      burst,
      intervalMs,
      concurrency,
      ,
      keyLimit,
      keyPerMs,
      keyBurst,
      keyIntervalMs,
      keyConcurrency
    ] = reply.map(num)
    const rate = storedRate(rateLimit, perMs, burst, intervalMs)
    const keyRate = storedRate(keyLimit, keyPerMs, keyBurst, keyIntervalMs)
    const perKey =
      keyRate === undefined && keyConcurrency === undefined
        ? undefined
        : {
            ...(keyRate ? { rate: keyRate } : {}),
            ...(keyConcurrency !== undefined ? { concurrency: keyConcurrency } : {})
          }
    const limit: QueueLimitInfo | undefined =
      rate === undefined && concurrency === undefined && perKey === undefined
        ? undefined
        : {
            ...(rate ? { rate } : {}),
            ...(concurrency !== undefined ? { concurrency } : {}),
            ...(perKey ? { perKey } : {})
          }
    return Result.succeed({ limit, holdUntilMs })
  }
})

/** Script `getQueueLimit`: the queue's limit, or undefined for an unlimited queue (its hold left out: `queueFlowScript` reads it too). */
export const getQueueLimitScript = defineScript<{ readonly queue: string }, QueueLimitInfo | undefined>({
  ...queueFlowScript,
  decode: (reply, input) => Result.map(queueFlowScript.decode(reply, input), (flow) => flow.limit)
})
