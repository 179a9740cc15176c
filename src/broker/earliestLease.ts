import * as Effect from "effect/Effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/**
 * When the earliest lease of a queue runs out, in unix seconds (the lowest score of its
 * `asynq:{q}:lease` zset: ZRANGE 0 0 WITHSCORES), or undefined when nothing in it is leased. The
 * recoverer's next wake-up is read from it.
 */
export const earliestLeaseExpirySec = Effect.fn("Broker.earliestLeaseExpirySec")(function* (queue: string) {
  const { redis } = yield* Broker
  return yield* redis.use("earliest lease", async (c): Promise<number | undefined> => {
    const [, score] = await c.zrange(queueKeys(queue).lease, "0", "0", "WITHSCORES")
    return score === undefined ? undefined : Number(score)
  })
})
