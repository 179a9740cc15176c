import { Clock, Effect } from "effect"
import { dequeueFromQueue } from "../broker/dequeue.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { type CorruptTask, decodeStored, setAsideCorrupt } from "./corrupt.js"
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
}

/**
 * Takes up to `count` pending tasks, queue by queue in the given order, skipping paused queues:
 * each becomes active under a lease (one script call per queue visited).
 */
export const dequeueLease = Effect.fn("Steps.dequeueLease")(function* (options: DequeueLeaseOptions) {
  const count = yield* wholeAtLeast("count", options.count ?? 1, 1)
  const leaseMs = yield* durationAtLeast("leaseMs", options.leaseMs ?? 30_000, 1000)
  const now = yield* Clock.currentTimeMillis
  const expiresSec = unixSeconds(now + leaseMs)
  const tasks: Array<LeasedTask> = []
  const corrupt: Array<CorruptTask> = []
  for (const queue of options.queues) {
    const want = count - tasks.length - corrupt.length
    if (want <= 0) break
    for (const { id, bytes } of yield* dequeueFromQueue(queue, want, expiresSec)) {
      const decoded = decodeStored(queue, id, bytes)
      if ("msg" in decoded) {
        tasks.push({ msg: decoded.msg, leaseExpiresAtMs: expiresSec * 1000 })
      } else if (bytes === undefined) {
        corrupt.push({ queue, id, error: decoded.error, outcome: "dropped" })
      } else {
        const c = yield* setAsideCorrupt(queue, id, decoded.error, { kind: "active" }, now)
        if (c) corrupt.push(c)
      }
    }
  }
  return { tasks, corrupt } satisfies DequeueLeaseResult as DequeueLeaseResult
})
