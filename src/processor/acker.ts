/**
 * Batched acknowledgements: tasks that succeed close together are completed in one round trip
 * (Steps.completeMany), without a timer and without a fiber of its own. Up to two batches are in
 * flight at a time, so Redis works on one while the tasks the other brought back run here.
 *
 * The first task to finish while a batch may go out sends one (after one yield, so the tasks
 * finishing in the same tick join it). When nothing is in flight and several tasks are waiting,
 * it sends the first half and hands the rest to the next waiter, which sends them at once as the
 * second batch: tasks that finish together (a burst, or the tasks one fetch brought) do not go
 * round in lock-step, one round trip for all of them and nothing sent meanwhile. Tasks finishing
 * while two batches are in flight, or while a batch's reply is landing (the tasks its ride leased
 * start at once and may finish right there), queue up, and when a batch has settled the first of
 * them sends the next. So at low load a task is acknowledged at once, and under load a round trip acknowledges
 * everything that finished in the meantime.
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
  /** This waiter is to send the next batch (it is then the first in the queue). */
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

/**
 * Asked as each batch goes out, with the number of tasks the batches in flight complete (this one
 * included: the slots they free): a call to send along, or none.
 */
export type Rider = (acks: number) => Effect.Effect<Ride | undefined, never, Broker>

export interface Acker {
  /** Completes one task (as Steps.complete), sharing the round trip with the tasks finishing at the same time. */
  readonly complete: (msg: TaskMessage) => Effect.Effect<CompleteResult, LeaseLost | RedisError, Broker>
}

/** At most this many tasks per round trip (the rest go in the next one). */
export const maxAckBatch = 500

/** At most this many batches in flight at a time. */
export const maxBatchesInFlight = 2

const interrupted = new RedisError({ op: "script complete", message: "the acknowledgement round trip was interrupted" })

/** The batcher's state (`makeAcker`), shared by the functions below. */
interface State {
  /** Finished tasks not sent yet, in the order they finished. */
  queue: Array<Waiter>
  /** Batches sent whose reply has not come back. */
  inFlight: number
  /** Tasks in those batches. */
  inFlightTasks: number
  /** A waiter has been told to send the next batch and has not yet. */
  senderPending: boolean
  /**
   * A batch's reply is landing (its ride starts the tasks it leased, which run up to their own
   * completion): a task finishing meanwhile waits for that batch to settle, which sends it.
   */
  landing: number
  readonly rider: Rider | undefined
  /** `designate` of this state, made once (what a settle queues as a microtask). */
  readonly designate: () => void
}

/** When a batch may go out and none is about to: tells the first queued waiter to send it. */
const designate = (s: State) => {
  const next = s.queue[0]
  if (s.senderPending || next === undefined || s.inFlight >= maxBatchesInFlight) return
  s.senderPending = true
  next.sends = true
  Deferred.doneUnsafe(next.wake, Exit.void)
}

/** A batch's reply came back (or never will): each of its waiters gets its outcome. */
const settle = (
  s: State,
  batch: ReadonlyArray<Waiter>,
  results: ReadonlyArray<AckResult> | undefined,
  self: Waiter
) => {
  s.inFlight--
  s.inFlightTasks -= batch.length
  s.landing--
  batch.forEach((w, i) => {
    w.result = results?.[i] ?? Result.fail(interrupted)
    if (w !== self) Deferred.doneUnsafe(w.wake, Exit.void)
  })
  // Once the settling fiber has gone on to finish its own task (its slot free for the next ride),
  // not from inside it; a microtask, not a scheduler turn.
  if (s.queue.length > 0) queueMicrotask(s.designate)
}

/** Takes the next batch off the queue: several waiting and room for more batches, they are shared out over the batches that may go now. */
const takeBatch = (s: State): Array<Waiter> => {
  const split = Math.ceil(s.queue.length / (maxBatchesInFlight - s.inFlight))
  const size = Math.min(split, maxAckBatch)
  const batch = s.queue.slice(0, size)
  s.queue = s.queue.slice(size)
  s.inFlight++
  s.inFlightTasks += batch.length
  return batch
}

/**
 * Sends one batch (which holds `self`, the first queued waiter) and any ride, then hands over.
 * The next batch goes only once this one is handed to the connection (`senderPending` stays set
 * until then): a ride counts the tasks of every batch in flight as completed before its lease,
 * which holds because Redis runs one connection's calls in the order they were handed over. (A
 * batch handed over after the one whose completions its ride counted would let Redis hold more
 * leases than the concurrency until that batch ran.)
 */
const send = (s: State, self: Waiter): Effect.Effect<void, never, Broker> =>
  Effect.suspend(() => {
    const batch = takeBatch(s)
    let handedOver = false
    const onSent = () => {
      if (handedOver) return
      handedOver = true
      s.senderPending = false
      designate(s)
    }
    return (s.rider ? s.rider(s.inFlightTasks) : Effect.succeed(undefined)).pipe(
      Effect.flatMap((ride) =>
        completeMany(
          batch.map((w) => w.msg),
          ride ? [ride.call] : [],
          ride ? [ride.lease] : [],
          onSent
        ).pipe(
          Effect.onExit((exit) => {
            const ok = Exit.isSuccess(exit) ? exit.value : undefined
            s.landing++
            return (ride ? ride.land(ok?.extra[0]) : Effect.void).pipe(
              Effect.ensuring(Effect.sync(() => settle(s, batch, ok?.results, self)))
            )
          })
        )
      ),
      // Never handed over (interrupted before the write, or a defect): the next batch may go now.
      Effect.ensuring(Effect.sync(onSent))
    )
  })

/** A waiter interrupted before its task went out leaves the queue (passing on the sender's role). */
const leave = (s: State, w: Waiter) =>
  Effect.sync(() => {
    const i = s.queue.indexOf(w)
    if (i < 0) return
    s.queue.splice(i, 1)
    if (w.sends) {
      s.senderPending = false
      designate(s)
    }
  })

const read = (w: Waiter) => Effect.suspend(() => Effect.fromResult(w.result!))

/** One task's completion: it joins the queue, sends a batch when it is the one to, and reads its own outcome. */
const complete = (s: State, msg: TaskMessage): Effect.Effect<CompleteResult, LeaseLost | RedisError, Broker> =>
  Effect.suspend(() => {
    const w: Waiter = { msg, result: undefined, sends: false, wake: Deferred.makeUnsafe<void>() }
    s.queue.push(w)
    let wait: Effect.Effect<void>
    if (s.queue.length === 1 && !s.senderPending && s.inFlight < maxBatchesInFlight && s.landing === 0) {
      // Nobody else is waiting (a waiting task always has a sender on its way, a batch being handed to
      // the connection, two batches in flight, a batch landing or a hand-over queued): this one sends,
      // and is the first in the queue as a sender must be.
      s.senderPending = true
      w.sends = true
      wait = Effect.yieldNow
    } else wait = Deferred.await(w.wake)
    return wait.pipe(
      Effect.onInterrupt(() => leave(s, w)),
      Effect.andThen(Effect.suspend(() => (w.result ? read(w) : send(s, w).pipe(Effect.andThen(read(w))))))
    )
  })

/** An acker; with `rider` (the intake's ride source, intake/rideSource.ts), each batch may carry the next fetch. */
export const makeAcker = (rider?: Rider): Acker => {
  const s: State = {
    queue: [],
    inFlight: 0,
    inFlightTasks: 0,
    senderPending: false,
    landing: 0,
    rider,
    designate: () => designate(s)
  }
  return { complete: (msg) => complete(s, msg) }
}
