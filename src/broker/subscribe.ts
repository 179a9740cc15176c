import * as Effect from "effect/Effect"
import { RedisError } from "../redis/errors.js"
import { Broker } from "./Broker.js"

export interface Subscription {
  /** Called with each message of the channels. */
  readonly onMessage: (channel: string, message: string) => void
  /** Called when the connection is (re)established: messages sent while it was down are lost. */
  readonly onReady: () => void
  /** Channels whose messages are binary: given as Buffers to `onBuffer` (and not to `onMessage`). */
  readonly buffers?: {
    readonly channels: ReadonlyArray<string>
    readonly onBuffer: (channel: string, message: Buffer) => void
  }
}

/**
 * Subscribes to `channels` on a connection of its own (closed with the scope). ioredis
 * resubscribes after a reconnect.
 */
export const subscribeChannels = Effect.fn("Broker.subscribeChannels")(function* (
  channels: ReadonlyArray<string>,
  subscription: Subscription
) {
  const { redis } = yield* Broker
  const conn = yield* redis.duplicate
  const binary = subscription.buffers
  if (binary) {
    const names = new Set(binary.channels)
    conn.on("message", (channel: string, message: string) => {
      if (!names.has(channel)) subscription.onMessage(channel, message)
    })
    conn.on("messageBuffer", (channel: Buffer, message: Buffer) => {
      const name = channel.toString()
      if (names.has(name)) binary.onBuffer(name, message)
    })
  } else conn.on("message", subscription.onMessage)
  conn.on("ready", subscription.onReady)
  const all = binary ? [...channels, ...binary.channels] : channels
  yield* Effect.tryPromise({
    try: () => conn.subscribe(...all),
    catch: (cause) =>
      new RedisError({
        op: "subscribe",
        message: `cannot subscribe to ${all.join(" and ")}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })
})
