/**
 * The hand-over receiver of a worker that parks (parking.ts): on a connection of its own, it waits
 * with BLPOP on the worker's hand-over lists (asynq:{q}:push:<server id>, one per queue served) and
 * gives each hand-over to the parking state. Redis answers a client blocked on a list before it
 * writes the reply of the command that pushed, so the worker has a task handed to it before the
 * enqueue's caller has its reply (lua/includes/pushToParked.lua).
 *
 * When the connection comes back (a hand-over may have been popped for a BLPOP whose reply was
 * lost), the parking state gives back to pending whatever was handed to this worker and did not
 * start here (`onReconnect`). A failed BLPOP is
 * logged and tried again after a backoff (Effect's Clock), up to 5 s; one that failed on a damaged
 * list (not a list) deletes that key first.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { Broker } from "../broker/Broker.js"
import { errorMessage, RedisError } from "../redis/errors.js"
import type { RedisClient } from "../redis/Redis.js"
import { queueKeys } from "../wire/keys.js"
import type { ParkingState } from "./parking.js"

/**
 * How long one BLPOP blocks (seconds, whole: every Redis version takes it). It only bounds how long
 * a connection that died without a word goes unnoticed: its reply is awaited for this plus
 * `replyGraceMs`, then the connection is reset.
 */
export const blockSeconds = 30
const replyGraceMs = 10_000

const retryBackoff = Schedule.min([Schedule.exponential(Duration.millis(100), 2), Schedule.spaced(Duration.seconds(5))]).pipe(Schedule.jittered)

/** Waits for hand-overs to `server` in `queues` until the scope closes (the connection is then dropped at once). */
export const receivePushes = Effect.fn("Processor.receivePushes")(function* (server: string, queues: ReadonlyArray<string>, parking: ParkingState) {
  const { redis } = yield* Broker
  const conn: RedisClient = yield* redis.duplicate
  // A blocked connection cannot QUIT (Redis reads nothing from it until the BLPOP ends): dropped at
  // once when the scope closes, before the duplicate's own QUIT.
  yield* Effect.addFinalizer(() => Effect.sync(() => conn.disconnect()))
  // This connection's only command is the BLPOP: its own time limit, not the client's commandTimeout.
  ;(conn.options as { commandTimeout?: number }).commandTimeout = blockSeconds * 1000 + replyGraceMs
  // Connected by now: every "ready" from here on is a reconnect.
  conn.on("ready", () => parking.onReconnect())
  const keys = queues.map((q) => queueKeys(q).pushList(server))
  const blpop = Effect.tryPromise({
    // The hand-over goes to the parking state straight from the reply's callback (it wakes the fetch loop).
    try: () =>
      conn.blpopBuffer(...keys, blockSeconds).then((reply) => {
        if (reply) parking.onPush(reply[1])
      }),
    catch: (cause) => new RedisError({ op: "BLPOP hand-over lists", message: errorMessage(cause), cause })
  })
  const timedOut = (e: RedisError) => errorMessage(e.cause).includes("timed out")
  /**
   * A hand-over list of the wrong type (damaged) fails every BLPOP, the other queues' too: the
   * lists are this worker's own (enqueues skip a damaged one), so a key that is not a list is
   * deleted, with a warning, and the BLPOP goes again.
   */
  const repair = Effect.forEach(
    keys,
    (key) =>
      Effect.tryPromise(() => conn.type(key)).pipe(
        Effect.flatMap((type) =>
          type === "list" || type === "none"
            ? Effect.void
            : Effect.andThen(
                Effect.logWarning(`hand-over list ${key} held a ${type}, not a list: deleted (hand-overs to this worker in its queue resume)`),
                Effect.tryPromise(() => conn.del(key))
              )
        ),
        Effect.ignore
      ),
    { discard: true }
  )
  /** Failures in a row: the first is a warning, the rest of an outage are debug lines (the connection's own outage is logged once). */
  let failures = 0
  yield* blpop.pipe(
    Effect.tap(() => Effect.sync(() => (failures = 0))),
    Effect.retry({
      schedule: retryBackoff,
      while: (e) =>
        Effect.as(
          Effect.andThen(
            (failures++ === 0 ? Effect.logWarning : Effect.logDebug)(`waiting for tasks handed to this worker failed, trying again: ${e.message}`),
            // No reply within the block time and its grace: the connection is presumed dead.
            e.message.includes("WRONGTYPE") ? repair : Effect.sync(() => timedOut(e) && conn.disconnect(true))
          ),
          true
        )
    }),
    Effect.forever,
    Effect.forkScoped
  )
})
