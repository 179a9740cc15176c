import { Clock, Effect } from "effect"
import type { Broker } from "../broker/Broker.js"
import type { IdAndBytes } from "../broker/decode.js"
import { dequeueLeaseScript } from "../broker/dequeueLease.js"
import { bindScript, runScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import type { ScriptCall } from "../redis/Redis.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { type CorruptTask, decodeStored, setAsideCorrupt } from "./corrupt.js"
import { type QueueFailure, type QueueFailures, queueFailures } from "./queueFailures.js"
import { durationAtLeast, wholeAtLeast } from "./validate.js"

/** A task handed to a worker: its message and when its lease runs out (unless extended). */
export interface LeasedTask {
  readonly msg: TaskMessage
  readonly leaseExpiresAtMs: number
}

export interface DequeueLeaseOptions {
  /** Queues in the order to take from (first non-empty, non-paused queue first). */
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per call (default 1). */
  readonly count?: number
  /** Lease length (default 30000 ms, asynq's). */
  readonly leaseMs?: number
}

export interface DequeueLeaseResult {
  readonly tasks: ReadonlyArray<LeasedTask>
  /** Tasks whose message was unusable: archived (or dropped), never returned as tasks. */
  readonly corrupt: ReadonlyArray<CorruptTask>
  /**
   * Queues that could not be served in this call (e.g. Redis refused one of their keys, or their
   * cluster shard is unreachable): the other queues were still visited, and every task taken is in
   * `tasks`. Empty when all went well.
   */
  readonly failedQueues: ReadonlyArray<QueueFailure>
}

/**
 * Takes up to `count` pending tasks, queue by queue in the given order, skipping paused queues:
 * each becomes active under a lease (one script call per queue visited). A queue that fails is
 * reported in `failedQueues` and the next one is visited; the call fails only when every queue it
 * visited failed (nothing was taken then).
 */
export const dequeueLease = Effect.fn("Steps.dequeueLease")(function* (options: DequeueLeaseOptions) {
  const count = yield* wholeAtLeast("count", options.count ?? 1, 1)
  const leaseMs = yield* durationAtLeast("leaseMs", options.leaseMs ?? 30_000, 1000)
  const now = yield* Clock.currentTimeMillis
  const expiresSec = unixSeconds(now + leaseMs)
  const tasks: Array<LeasedTask> = []
  const corrupt: Array<CorruptTask> = []
  const failures = queueFailures<RedisError>()
  const visited: Array<string> = []
  for (const queue of options.queues) {
    const want = count - tasks.length - corrupt.length
    if (want <= 0) break
    visited.push(queue)
    const pairs = yield* failures.isolate(queue, runScript(dequeueLeaseScript, { queue, count: want, leaseExpiresAtSec: expiresSec }))
    if (pairs !== undefined) yield* sortLeased(queue, pairs, expiresSec, now, tasks, corrupt, failures)
  }
  if (tasks.length === 0 && corrupt.length === 0) yield* failures.unlessAllFailed(visited)
  return { tasks, corrupt, failedQueues: failures.failedQueues } satisfies DequeueLeaseResult as DequeueLeaseResult
})

/**
 * Decodes popped tasks into `tasks`; unusable ones are set aside and reported in `corrupt`. Never
 * fails: a corrupt task that cannot be set aside is a failure of its queue (it stays active under
 * its lease, for the recoverer), and the popped tasks after it are still handed out.
 */
const sortLeased = Effect.fnUntraced(function* (
  queue: string,
  pairs: ReadonlyArray<IdAndBytes>,
  expiresSec: number,
  nowMs: number,
  tasks: Array<LeasedTask>,
  corrupt: Array<CorruptTask>,
  failures: QueueFailures<RedisError>
) {
  for (const { id, bytes } of pairs) {
    const decoded = decodeStored(queue, id, bytes)
    if ("msg" in decoded) {
      tasks.push({ msg: decoded.msg, leaseExpiresAtMs: expiresSec * 1000 })
    } else if (bytes === undefined) {
      corrupt.push({ queue, id, error: decoded.error, outcome: "dropped" })
    } else {
      const c = yield* failures.isolate(queue, setAsideCorrupt(queue, id, decoded.error, { kind: "active" }, nowMs))
      if (c) corrupt.push(c)
    }
  }
})

/** `dequeueLease` of one queue as a script call, to send in another step's round trip (with buffers). */
export interface DequeueLeaseCall {
  readonly call: ScriptCall
  /** Reads the call's reply (as `dequeueLease` would). */
  readonly land: (reply: unknown) => Effect.Effect<DequeueLeaseResult, RedisError, Broker>
}

/** Prepares `dequeueLease({ queues: [queue], count, leaseMs })` for a batch; count >= 1, leaseMs >= 1000. */
export const dequeueLeaseCall = (queue: string, count: number, leaseMs: number, nowMs: number): DequeueLeaseCall => {
  const expiresSec = unixSeconds(nowMs + leaseMs)
  const bound = bindScript(dequeueLeaseScript, { queue, count, leaseExpiresAtSec: expiresSec })
  return {
    call: bound.call,
    land: (reply) =>
      Effect.gen(function* () {
        const tasks: Array<LeasedTask> = []
        const corrupt: Array<CorruptTask> = []
        const failures = queueFailures<RedisError>()
        yield* sortLeased(queue, yield* Effect.fromResult(bound.decode(reply)), expiresSec, nowMs, tasks, corrupt, failures)
        return { tasks, corrupt, failedQueues: failures.failedQueues } satisfies DequeueLeaseResult as DequeueLeaseResult
      })
  }
}
