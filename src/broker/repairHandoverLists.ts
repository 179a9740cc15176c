import * as Effect from "effect/Effect"
import type { HandoverConnection } from "./handoverConnection.js"

/**
 * A hand-over list of the wrong type (damaged) fails every BLPOP, the other queues' too: the lists
 * are the worker's own (enqueues skip a damaged one), so each key that is neither a list nor absent
 * (TYPE) is deleted, with a warning. Never fails (a key it could not check is left as it is).
 */
export const repairHandoverLists = (conn: HandoverConnection): Effect.Effect<void> =>
  Effect.forEach(
    conn.keys,
    (key) =>
      Effect.tryPromise(() => conn.client.type(key)).pipe(
        Effect.flatMap((type) =>
          type === "list" || type === "none"
            ? Effect.void
            : Effect.andThen(
                Effect.logWarning(
                  `hand-over list ${key} held a ${type}, not a list: deleted (hand-overs to this worker in its queue resume)`
                ),
                Effect.tryPromise(() => conn.client.del(key))
              )
        ),
        Effect.ignore
      ),
    { discard: true }
  )
