/**
 * The hand-over receiver of a worker that parks (parking.ts): on a connection of its own
 * (broker/handoverConnection.ts), it waits with BLPOP on the worker's hand-over lists
 * (asynq:{q}:push:<server id>, one per queue served; broker/popHandover.ts) and gives each
 * hand-over to the parking state. Redis answers a client blocked on a list before it writes the
 * reply of the command that pushed, so the worker has a task handed to it before the enqueue's
 * caller has its reply (lua/includes/pushToParked.lua).
 *
 * When the connection comes back (a hand-over may have been popped for a BLPOP whose reply was
 * lost), the parking state gives back to pending whatever was handed to this worker and did not
 * start here (`onReconnect`). A failed BLPOP is logged and tried again after a backoff (Effect's
 * Clock), up to 5 s; one that failed on a damaged list (not a list) deletes that key first
 * (broker/repairHandoverLists.ts); one whose reply did not come in time resets the connection.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { openHandoverConnection, resetHandoverConnection } from "../broker/handoverConnection.js"
import { popFoundDamagedList, popHandover, popTimedOut } from "../broker/popHandover.js"
import { repairHandoverLists } from "../broker/repairHandoverLists.js"
import type { ParkingState } from "./parking.js"

const retryBackoff = Schedule.min([
  Schedule.exponential(Duration.millis(100), 2),
  Schedule.spaced(Duration.seconds(5))
]).pipe(Schedule.jittered)

/** Waits for hand-overs to `server` in `queues` until the scope closes (the connection is then dropped at once). */
export const receivePushes = Effect.fn("Processor.receivePushes")(function* (
  server: string,
  queues: ReadonlyArray<string>,
  parking: ParkingState
) {
  const conn = yield* openHandoverConnection(server, queues, () => parking.onReconnect())
  // The hand-over goes to the parking state straight from the reply's callback (it wakes the fetch loop).
  const pop = popHandover(conn, parking.onPush)
  /** Failures in a row: the first is a warning, the rest of an outage are debug lines (the connection's own outage is logged once). */
  let failures = 0
  yield* pop.pipe(
    Effect.tap(() => Effect.sync(() => (failures = 0))),
    Effect.retry({
      schedule: retryBackoff,
      while: (e) =>
        Effect.as(
          Effect.andThen(
            (failures++ === 0 ? Effect.logWarning : Effect.logDebug)(
              `waiting for tasks handed to this worker failed, trying again: ${e.message}`
            ),
            // No reply within the block time and its grace: the connection is presumed dead.
            popFoundDamagedList(e)
              ? repairHandoverLists(conn)
              : popTimedOut(e)
                ? resetHandoverConnection(conn)
                : Effect.void
          ),
          true
        )
    }),
    Effect.forever,
    Effect.forkScoped
  )
})
