import * as Effect from "effect/Effect"
import { isErrorReply } from "../redis/errors.js"
import { Broker } from "./Broker.js"

/**
 * A failure without an answer from Redis (the connection dropped, or a round trip gave up): the
 * script may have run. An error reply (ReplyError) is an answer: the script did not run (or failed).
 */
export const isLostReply = (e: { readonly _tag: string; readonly cause?: unknown }): boolean =>
  e._tag === "RedisError" && !isErrorReply(e.cause)

/**
 * How many outages the broker's connection has had so far. A call sent at count n and answered at
 * a higher count may have been sent twice (ioredis resends what was unanswered when it reconnects).
 */
export const connectionOutages: Effect.Effect<number, never, Broker> = Effect.map(
  Broker,
  ({ redis }) => redis.connectionState().outages
)
