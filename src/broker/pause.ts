import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { InvalidState } from "./errors.js"
import { asInteger } from "./replies.js"
import { unixSeconds } from "./time.js"

/** Script `pause`; InvalidState when the queue is already paused. */
export const pauseQueue = Effect.fn("Broker.pause")(function* (queue: string, nowMs: number) {
  const { redis } = yield* Broker
  const n = yield* asInteger("pause", yield* redis.script("pause", [queueKeys(queue).paused], [unixSeconds(nowMs)]))
  if (n !== 1) return yield* Effect.fail(new InvalidState({ message: `queue "${queue}" is already paused` }))
})

/** Script `unpause`; InvalidState when the queue is not paused. */
export const unpauseQueue = Effect.fn("Broker.unpause")(function* (queue: string) {
  const { redis } = yield* Broker
  const n = yield* asInteger("unpause", yield* redis.script("unpause", [queueKeys(queue).paused], []))
  if (n !== 1) return yield* Effect.fail(new InvalidState({ message: `queue "${queue}" is not paused` }))
})
