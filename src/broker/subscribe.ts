import * as Effect from "effect/Effect"
import { RedisError } from "../redis/errors.js"
import { Broker } from "./Broker.js"

export interface Subscription {
  /** Called with each message of the channels. */
  readonly onMessage: (channel: string, message: string) => void
  /** Called when the connection is (re)established: messages sent while it was down are lost. */
  readonly onReady: () => void
}

/**
 * Subscribes to `channels` on a connection of its own (closed with the scope). ioredis
 * resubscribes after a reconnect.
 */
export const subscribeChannels = Effect.fn("Broker.subscribeChannels")(function* (channels: ReadonlyArray<string>, subscription: Subscription) {
  const { redis } = yield* Broker
  const conn = yield* redis.duplicate
  conn.on("message", subscription.onMessage)
  conn.on("ready", subscription.onReady)
  yield* Effect.tryPromise({
    try: () => conn.subscribe(...channels),
    catch: (cause) =>
      new RedisError({ op: "subscribe", message: `cannot subscribe to ${channels.join(" and ")}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
  })
})
