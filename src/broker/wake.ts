import * as Effect from "effect/Effect"
import { wakeChannel } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/** PUBLISHes each queue name on the wake-up channel; returns how many subscribers heard them. */
export const publishWake = Effect.fn("Processor.publishWake")(function* (queues: ReadonlyArray<string>) {
  if (queues.length === 0) return 0
  const { redis } = yield* Broker
  return yield* redis.use("publish wake", async (c) => {
    let n = 0
    for (const q of queues) n += await c.publish(wakeChannel, q)
    return n
  })
})
