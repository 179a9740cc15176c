import * as Effect from "effect/Effect"
import { errorMessage, RedisError } from "../redis/errors.js"
import { blockSeconds, type HandoverConnection } from "./handoverConnection.js"

/**
 * BLPOP on the worker's hand-over lists for up to `blockSeconds`: a hand-over goes to `onHandover`
 * straight from the reply's callback (no Effect step before the worker has it); none came in the
 * block time, nothing. Built once and run again for each wait (no allocation per run but the call).
 */
export const popHandover = (
  conn: HandoverConnection,
  onHandover: (message: Buffer) => void
): Effect.Effect<void, RedisError> =>
  Effect.tryPromise({
    try: () =>
      conn.client.blpopBuffer(...conn.keys, blockSeconds).then((reply) => {
        if (reply) onHandover(reply[1])
      }),
    catch: (cause) => new RedisError({ op: "BLPOP hand-over lists", message: errorMessage(cause), cause })
  })

/** The pop's reply did not come within the block time and its grace (the connection is presumed dead: resetHandoverConnection). */
export const popTimedOut = (e: RedisError): boolean => errorMessage(e.cause).includes("timed out")

/** The pop failed on a hand-over list of the wrong type (damaged: repairHandoverLists). */
export const popFoundDamagedList = (e: RedisError): boolean => e.message.includes("WRONGTYPE")
