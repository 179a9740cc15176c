/**
 * Batched acknowledgements: tasks that succeed close together are completed in one round trip
 * (Steps.completeMany), without a timer and without a fiber of its own. The first task to
 * finish while no batch is in flight sends the batch (after one yield, so the tasks finishing in
 * the same tick join it); tasks finishing while a batch is in flight queue up, and when the batch
 * comes back the first of them sends the next one. So at low load a task is acknowledged at once,
 * and under load one round trip acknowledges everything that finished in the meantime.
 *
 * Each task still gets its own outcome (done, LeaseLost or a RedisError), so the caller retries
 * or reports per task exactly as for a single `complete`.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type { Broker } from "../broker/Broker.js"
import type { LeaseLost } from "../broker/errors.js"
import type { RidingLease } from "../broker/completeAndLease.js"
import { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import { type CompleteResult, completeMany } from "../steps/complete.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

type AckResult = Result.Result<CompleteResult, LeaseLost | RedisError>

interface Waiter {
  readonly msg: TaskMessage
  result: AckResult | undefined
  /** This waiter is to send the next batch. */
  sends: boolean
  /** Completed when `result` is set, or when this waiter is to send the next batch. */
  readonly wake: Deferred.Deferred<void>
}

/** A script call of another step that rides along with a batch of completions. */
export interface Ride {
  readonly call: ScriptCall
  /** What `call` leases, when it is a dequeueLease call (a lease of a queue completed in the batch goes in that queue's call). */
  readonly lease?: RidingLease
  /** Takes the call's reply (undefined when the round trip failed or was interrupted). Runs before the batch's tasks are told their outcome. */
  readonly land: (reply: BatchReply | undefined) => Effect.Effect<void, never, Broker>
}

/** Asked as each batch goes out, with the number of tasks it completes: a call to send along, or none. */
export type Rider = (acks: number) => Effect.Effect<Ride | undefined, never, Broker>

export interface Acker {
  /** Completes one task (as Steps.complete), sharing the round trip with the tasks finishing at the same time. */
  readonly complete: (msg: TaskMessage) => Effect.Effect<CompleteResult, LeaseLost | RedisError, Broker>
  /** Sets the rider (the fetcher: the next fetch goes out with the completions that free its slots). */
  readonly setRider: (rider: Rider | undefined) => void
}

/** At most this many tasks per round trip (the rest go in the next one). */
export const maxAckBatch = 500

const interrupted = new RedisError({ op: "script complete", message: "the acknowledgement round trip was interrupted" })

export const makeAcker = (): Acker => {
  let queue: Array<Waiter> = []
  /** A batch is in flight, or a waiter has been told to send the next one. */
  let sending = false
  let rider: Rider | undefined

  /** Tells the first queued waiter to send the next batch, or notes that none is in flight. */
  const handOff = () => {
    const next = queue[0]
    if (next) {
      next.sends = true
      Deferred.doneUnsafe(next.wake, Exit.void)
    } else sending = false
  }

  const settle = (batch: ReadonlyArray<Waiter>, results: ReadonlyArray<AckResult> | undefined, self: Waiter) => {
    batch.forEach((w, i) => {
      w.result = results?.[i] ?? Result.fail(interrupted)
      if (w !== self) Deferred.doneUnsafe(w.wake, Exit.void)
    })
    handOff()
  }

  /** Sends one batch (which holds `self`, the first queued waiter) and any ride, then hands over. */
  const send = (self: Waiter): Effect.Effect<void, never, Broker> =>
    Effect.suspend(() => {
      const batch = queue.length <= maxAckBatch ? queue : queue.slice(0, maxAckBatch)
      queue = batch === queue ? [] : queue.slice(maxAckBatch)
      return (rider ? rider(batch.length) : Effect.succeed(undefined)).pipe(
        Effect.flatMap((ride) =>
          completeMany(
            batch.map((w) => w.msg),
            ride ? [ride.call] : [],
            ride ? [ride.lease] : []
          ).pipe(
            Effect.onExit((exit) => {
              const ok = Exit.isSuccess(exit) ? exit.value : undefined
              return (ride ? ride.land(ok?.extra[0]) : Effect.void).pipe(Effect.ensuring(Effect.sync(() => settle(batch, ok?.results, self))))
            })
          )
        )
      )
    })

  /** A waiter interrupted before its task went out leaves the queue (passing on the sender's role). */
  const leave = (w: Waiter) =>
    Effect.sync(() => {
      const i = queue.indexOf(w)
      if (i < 0) return
      queue.splice(i, 1)
      if (w.sends) handOff()
    })

  const read = (w: Waiter) => Effect.suspend(() => Effect.fromResult(w.result!))

  return {
    setRider: (r) => {
      rider = r
    },
    complete: (msg) =>
      Effect.suspend(() => {
        const w: Waiter = { msg, result: undefined, sends: false, wake: Deferred.makeUnsafe<void>() }
        queue.push(w)
        let wait: Effect.Effect<void>
        if (!sending) {
          sending = true
          w.sends = true
          wait = Effect.yieldNow
        } else wait = Deferred.await(w.wake)
        return wait.pipe(
          Effect.onInterrupt(() => leave(w)),
          Effect.andThen(Effect.suspend(() => (w.result ? read(w) : send(w).pipe(Effect.andThen(read(w))))))
        )
      })
  }
}
