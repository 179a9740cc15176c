import * as Effect from "effect/Effect"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/** How many tasks wait in a queue's pending list; a paused queue counts as 0 (nobody may take them). */
export interface QueueDepth {
  readonly queue: string
  readonly pending: number
  readonly paused: boolean
  /**
   * When asked for (`oldestAge`): the oldest pending task's `pending_since` in unix ms, or undefined
   * when the queue has no pending task (or is paused).
   */
  readonly oldestPendingSinceMs?: number | undefined
}

/**
 * Reads the pending depth of each queue (one round trip per queue: its keys share a cluster slot),
 * for the dispatcher. With `oldestAge`, also the oldest pending task's pending_since (a second
 * round trip for a queue that has pending tasks).
 */
export const queueDepths = Effect.fn("Broker.queueDepths")(function* (
  queues: ReadonlyArray<string>,
  opts?: { readonly oldestAge?: boolean }
) {
  const { redis } = yield* Broker
  const oldestAge = opts?.oldestAge === true
  return yield* Effect.forEach(
    queues,
    (queue): Effect.Effect<QueueDepth, RedisError> => {
      const k = queueKeys(queue)
      // Plain commands sent together (over TCP they share one round trip; every transport has them).
      return Effect.gen(function* () {
        const reads: Array<Effect.Effect<unknown, RedisError>> = [
          redis.command("queue depth", ["LLEN", k.pending]),
          redis.command("queue depth", ["EXISTS", k.paused])
        ]
        // asynq pushes on the left and takes from the right: the oldest pending task is the last.
        if (oldestAge) reads.push(redis.command("queue depth", ["LINDEX", k.pending, -1]))
        const res = yield* Effect.all(reads, { concurrency: "unbounded" })
        const paused = Number(res[1] ?? 0) === 1
        const pending = paused ? 0 : Number(res[0] ?? 0)
        if (!oldestAge) return { queue, pending, paused }
        const oldestId = res[2]
        if (pending === 0 || typeof oldestId !== "string")
          return { queue, pending, paused, oldestPendingSinceMs: undefined }
        const since = yield* redis.command("queue depth", ["HGET", k.task(oldestId), "pending_since"])
        // pending_since is unix nanoseconds (a decimal string); a task taken meanwhile has none.
        return {
          queue,
          pending,
          paused,
          oldestPendingSinceMs: typeof since === "string" ? Number(BigInt(since) / 1_000_000n) : undefined
        }
      })
    },
    { concurrency: "unbounded" }
  )
})
