import { Effect } from "effect"
import type { RedisError } from "../redis/errors.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/** How many tasks wait in a queue's pending list; a paused queue counts as 0 (nobody may take them). */
export interface QueueDepth {
  readonly queue: string
  readonly pending: number
  readonly paused: boolean
}

/** Reads the pending depth of each queue (one round trip per queue: its keys share a cluster slot), for the dispatcher. */
export const queueDepths = Effect.fn("Broker.queueDepths")(function* (queues: ReadonlyArray<string>) {
  const { redis } = yield* Broker
  return yield* Effect.forEach(
    queues,
    (queue): Effect.Effect<QueueDepth, RedisError> => {
      const k = queueKeys(queue)
      return redis.use("queue depth", async (c) => {
        const res = (await c.pipeline().llen(k.pending).exists(k.paused).exec()) ?? []
        for (const [err] of res) if (err) throw err
        const paused = Number(res[1]?.[1] ?? 0) === 1
        return { queue, pending: paused ? 0 : Number(res[0]?.[1] ?? 0), paused }
      })
    },
    { concurrency: "unbounded" }
  )
})
