import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RedisConnectionError } from "../redis/errors.js"
import type { RedisClient } from "../redis/Redis.js"
import { setCommandTimeout } from "../redis/commandDeadlines.js"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/**
 * How long one BLPOP on the hand-over lists blocks (seconds, whole: every Redis version takes it).
 * It only bounds how long a connection that died without a word goes unnoticed: its reply is
 * awaited for this plus `replyGraceMs`, then the connection is reset.
 */
export const blockSeconds = 30
const replyGraceMs = 10_000

/**
 * A worker's connection for its hand-over lists (asynq:{q}:push:<server id>, one per queue served):
 * popHandover.ts waits on them, repairHandoverLists.ts mends a damaged one.
 */
export interface HandoverConnection {
  readonly client: RedisClient
  /** The worker's hand-over lists, in the order of its queues. */
  readonly keys: ReadonlyArray<string>
}

/**
 * Opens the hand-over connection of worker `server` serving `queues`, a connection of its own
 * (closed with the scope). Its only command is a blocking pop: its time limit is the block time
 * and a grace, not the client's commandTimeout. `onReconnect` hears of every reconnect (a
 * hand-over may have been popped for a reply that was lost).
 */
export const openHandoverConnection = Effect.fn("Broker.openHandoverConnection")(function* (
  server: string,
  queues: ReadonlyArray<string>,
  onReconnect: () => void
): Effect.fn.Return<HandoverConnection, RedisConnectionError, Broker | Scope.Scope> {
  const { redis } = yield* Broker
  const client = yield* redis.duplicate
  // A blocked connection cannot QUIT (Redis reads nothing from it until the BLPOP ends): dropped at
  // once when the scope closes, before the duplicate's own QUIT.
  yield* Effect.addFinalizer(() => Effect.sync(() => client.disconnect()))
  setCommandTimeout(client, blockSeconds * 1000 + replyGraceMs)
  // Connected by now: every "ready" from here on is a reconnect.
  client.on("ready", onReconnect)
  return { client, keys: queues.map((q) => queueKeys(q).pushList(server)) }
})

/** Drops the hand-over connection and connects it again (its reply did not come: the connection is presumed dead). */
export const resetHandoverConnection = (conn: HandoverConnection): Effect.Effect<void> =>
  Effect.sync(() => conn.client.disconnect(true))
