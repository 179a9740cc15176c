import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Broker } from "../broker/Broker.js"
import { type IdAndBytes, unexpectedReply } from "../broker/decode.js"
import { type DequeueLeaseReply, dequeueLeaseScript, type FlowWait } from "../broker/dequeueLease.js"
import { canLeaseByIds, dequeueLeaseByIds, landSortedLease, sortedLeaseRead } from "../broker/leaseByIds.js"
import type { MessageSizes } from "../broker/messageSizes.js"
import { connectionOutages, isLostReply } from "../broker/lostReply.js"
import type { RidingLease } from "../broker/completeAndLease.js"
import { leaseScore, releaseLeasesScript } from "../broker/releaseLeases.js"
import { bindScript, runScript } from "../broker/script.js"
import type { RedisError } from "../redis/errors.js"
import type { ScriptCall } from "../redis/Redis.js"
import { unixSeconds } from "../broker/time.js"
import type { TaskMessage } from "../wire/TaskMessage.js"
import { type CorruptTask, decodeStored, setAsideCorrupt } from "./corrupt.js"
import { type QueueFailure, type QueueFailures, queueFailures } from "./queueFailures.js"
import { durationAtLeast, wholeAtLeast } from "./validate.js"

/** A task handed to a worker: its message and when its lease runs out (unless extended). */
export interface LeasedTask {
  readonly msg: TaskMessage
  readonly leaseExpiresAtMs: number
}

/** Settings of a dequeue: the queues in order, how many tasks at most, and the lease. */
export interface DequeueLeaseOptions {
  /** Queues in the order to take from (first non-empty, non-paused queue first). */
  readonly queues: ReadonlyArray<string>
  /** At most this many tasks per call (default 1). */
  readonly count?: number
  /** Lease length (default 30000 ms, asynq's). */
  readonly leaseMs?: number
}

/** What a dequeue took: the leased tasks, the corrupt ones set aside, and the queues that failed. */
export interface DequeueLeaseResult {
  readonly tasks: ReadonlyArray<LeasedTask>
  /** Tasks whose message was unusable: archived (or dropped), never returned as tasks. */
  readonly corrupt: ReadonlyArray<CorruptTask>
  /**
   * Queues that could not be served in this call (e.g. Redis refused one of their keys, or their
   * cluster shard is unreachable): the other queues were still visited, and every task taken is in
   * `tasks`. Empty when all went well.
   */
  readonly failedQueues: ReadonlyArray<QueueFailure>
  /**
   * Set when a queue's flow-control limit held back tasks this call would have taken (the other
   * queues were still visited): `untilMs`, the earliest time (unix ms, the caller's clock) at which
   * a rate-limited queue allows its next task; `capped`, a queue's concurrency cap was reached (a
   * task of it has to end first). Absent when no limit cut the call.
   */
  readonly limited?: FlowLimited
}

/** How a queue's flow-control limit held back a dequeue (see `DequeueLeaseResult.limited`). */
export interface FlowLimited {
  readonly untilMs: number | undefined
  readonly capped: boolean
}

/** Adds one queue's flow wait (the reply's, relative to `nowMs`) to what a dequeue was held back by. */
const addLimited = (acc: FlowLimited | undefined, wait: FlowWait, nowMs: number): FlowLimited => {
  if (wait.by === "concurrency") return { untilMs: acc?.untilMs, capped: true }
  const untilMs = nowMs + wait.waitMs
  return {
    untilMs: acc?.untilMs === undefined ? untilMs : Math.min(acc.untilMs, untilMs),
    capped: acc?.capped ?? false
  }
}

/**
 * Takes up to `count` pending tasks, queue by queue in the given order, skipping paused queues:
 * each becomes active under a lease (one script call per queue visited). A queue that fails is
 * reported in `failedQueues` and the next one is visited; the call fails only when every queue it
 * visited failed (nothing was taken then).
 */
export const dequeueLease = Effect.fn("Steps.dequeueLease")(function* (options: DequeueLeaseOptions) {
  const count = yield* wholeAtLeast("count", options.count ?? 1, 1)
  const leaseMs = yield* durationAtLeast("leaseMs", options.leaseMs ?? 30_000, 1000)
  return yield* leaseFrom(options.queues, count, leaseMs)
})

/**
 * A worker that parks on each queue its fetch finds short (lua/dequeueLease.lua): the next new task
 * of that queue is then handed to it directly (lua/includes/pushToParked.lua, processor/parking.ts).
 */
export interface Parking {
  /** The worker's server id (its hand-over lists are `queueKeys(q).pushList(server)`). */
  readonly server: string
  /**
   * Called with the token of each dequeue call before it is sent: the call leaves it as a park when
   * its queue comes back short (otherwise nothing is leased under it).
   */
  readonly parked: (queue: string, token: string) => void
  /**
   * Called when that call's reply came back short (the park was left): how many tasks the worker
   * may be handed under the token (the slots the call left unfilled; lua/dequeueLease.lua).
   */
  readonly room?: (queue: string, token: string, room: number) => void
}

/** How a worker's fetch leases, beyond what the `dequeueLease` step does. */
export interface LeaseFromOptions {
  /** The worker parks on the queues that come back short. */
  readonly parking?: Parking | undefined
  /**
   * A queue whose message sizes this connection does not know yet is asked for a few tasks first
   * (MessageSizes.fetchCount), then, when they all came, for the rest. The `dequeueLease` step
   * always asks for `count` at once.
   */
  readonly firstLook?: boolean | undefined
}

/**
 * `dequeueLease` with checked arguments (count >= 1, leaseMs >= 1000) and no span of its own: what
 * a worker's fetch runs (its options were checked when it started), with its `options`.
 */
export const leaseFrom = (
  queues: ReadonlyArray<string>,
  count: number,
  leaseMs: number,
  options: LeaseFromOptions = {}
): Effect.Effect<DequeueLeaseResult, RedisError, Broker> =>
  Effect.flatMap(Broker, (broker) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const expiresSec = unixSeconds(now + leaseMs)
      const tasks: Array<LeasedTask> = []
      const corrupt: Array<CorruptTask> = []
      const failures = queueFailures<RedisError>()
      const visited: Array<string> = []
      let limited: FlowLimited | undefined
      const { parking, firstLook = false } = options
      const outages = () => broker.redis.connectionState().outages
      /** Visits queues[i] and the ones after it while tasks are wanted. */
      const visit = (i: number): Effect.Effect<void, never, Broker> => {
        const wanted = count - tasks.length - corrupt.length
        if (i >= queues.length || wanted <= 0) return Effect.void
        const queue = queues[i]!
        // A worker's fetch asks a queue whose message sizes this connection does not know yet for a
        // few tasks first (MessageSizes.fetchCount), then, when they all came, for the rest (below).
        const want = firstLook ? broker.messageSizes.fetchCount(queue, wanted) : wanted
        if (visited[visited.length - 1] !== queue) visited.push(queue)
        const score = leaseScore(expiresSec)
        const outagesBefore = outages()
        const park = parking ? { server: parking.server, token: leaseScore(expiresSec) } : undefined
        // Told before the call goes out: a park whose reply is lost is still one the worker knows of.
        if (park) parking!.parked(queue, park.token)
        const input = { queue, count: want, leaseExpiresAtSec: expiresSec, nowMs: now, leaseScore: score, park }
        // Large messages are read with SORT in the lease's MULTI rather than through the script (leaseByIds.ts).
        const byIds = canLeaseByIds(broker) && broker.messageSizes.large(queue, want)
        const popped = (byIds ? dequeueLeaseByIds(input) : runScript(dequeueLeaseScript, input)).pipe(
          Effect.tapError((e) => (isLostReply(e) ? releaseLeasedToNobody(queue, score, [], now) : Effect.void))
        )
        return Effect.flatMap(failures.isolate(queue, popped), (reply) => {
          if (reply === undefined) return visit(i + 1)
          const pairs = reply.pairs
          recordSizes(broker.messageSizes, queue, pairs)
          if (reply.limited) limited = addLimited(limited, reply.limited, now)
          if (park && !reply.limited && pairs.length < want) parking!.room?.(queue, park.token, want - pairs.length)
          // A first look that brought all it asked for: the same queue again for the rest, its sizes now known.
          const next = want < wanted && !reply.limited && pairs.length === want ? i : i + 1
          const sorted = Effect.andThen(
            sortLeased(queue, pairs, expiresSec, now, tasks, corrupt, failures),
            Effect.suspend(() => visit(next))
          )
          return outages() !== outagesBefore
            ? Effect.andThen(
                releaseLeasedToNobody(
                  queue,
                  score,
                  pairs.map((p) => p.id),
                  now
                ),
                sorted
              )
            : sorted
        })
      }
      return visit(0).pipe(
        Effect.andThen(
          Effect.suspend(() =>
            tasks.length === 0 && corrupt.length === 0 ? failures.unlessAllFailed(visited) : Effect.void
          )
        ),
        Effect.andThen(
          Effect.sync(() =>
            limited
              ? ({
                  tasks,
                  corrupt,
                  failedQueues: failures.failedQueues,
                  limited
                } satisfies DequeueLeaseResult as DequeueLeaseResult)
              : ({
                  tasks,
                  corrupt,
                  failedQueues: failures.failedQueues
                } satisfies DequeueLeaseResult as DequeueLeaseResult)
          )
        )
      )
    })
  )

/**
 * After a dequeue whose reply was lost (the call failed without an answer), or that was answered
 * after a reconnect (ioredis sends again what was unanswered, so the script may have run twice):
 * the tasks leased under that call's score that the reply did not bring are leased to nobody; they
 * go back to the head of pending at once instead of sitting active until lease + grace. Also what a
 * parked worker gives back (processor/parking.ts; `what` names the case in the log). Returns how
 * many went back. A failure here is logged only (the recoverer still takes such tasks back once
 * their lease runs out).
 */
export const releaseLeasedToNobody = (
  queue: string,
  score: string,
  received: ReadonlyArray<string>,
  nowMs: number,
  what = "a dequeue whose reply was lost",
  /** How a give-back is logged: a warning (something went wrong on the way), or debug (a normal event). */
  log: (message: string) => Effect.Effect<void> = Effect.logWarning
): Effect.Effect<number, never, Broker> =>
  runScript(releaseLeasesScript, { queue, leaseScore: score, received, nowMs }).pipe(
    Effect.tap((n) =>
      n > 0 ? log(`queue "${queue}": ${n} task(s) leased by ${what} went back to pending`) : Effect.void
    ),
    Effect.catch((e) =>
      Effect.as(
        Effect.logWarning(
          `queue "${queue}": could not check for tasks leased by ${what} (the recoverer takes them back once their lease runs out): ${e.message}`
        ),
        0
      )
    )
  )

/** Records the messages a lease brought in the queue's average message size (one update per call). */
const recordSizes = (sizes: MessageSizes, queue: string, pairs: ReadonlyArray<IdAndBytes>): void => {
  let bytes = 0
  for (let i = 0; i < pairs.length; i++) bytes += pairs[i]!.bytes?.length ?? 0
  sizes.record(queue, pairs.length, bytes)
}

/**
 * Decodes popped tasks into `tasks`; unusable ones are set aside and reported in `corrupt`. Never
 * fails: a corrupt task that cannot be set aside is a failure of its queue (it stays active under
 * its lease, for the recoverer), and the popped tasks after it are still handed out. Also reads the
 * tasks handed to a parked worker (processor/parking.ts).
 */
export const sortLeased = (
  queue: string,
  pairs: ReadonlyArray<IdAndBytes>,
  expiresSec: number,
  nowMs: number,
  tasks: Array<LeasedTask>,
  corrupt: Array<CorruptTask>,
  failures: QueueFailures<RedisError>
): Effect.Effect<void, never, Broker> => {
  /** Messages to set aside, each with the number of corrupt entries before it (`corrupt` keeps the order the tasks were popped in). */
  let unusable: Array<{ readonly id: string; readonly error: string; readonly at: number }> | undefined
  for (const { id, bytes } of pairs) {
    const decoded = decodeStored(queue, id, bytes)
    if ("msg" in decoded) {
      tasks.push({ msg: decoded.msg, leaseExpiresAtMs: expiresSec * 1000 })
    } else if (bytes === undefined) {
      corrupt.push({ queue, id, error: decoded.error, outcome: "dropped" })
    } else (unusable ??= []).push({ id, error: decoded.error, at: corrupt.length })
  }
  // The common case, every message decoded, needs no Effect step.
  if (unusable === undefined) return Effect.void
  const setAside = unusable
  return Effect.forEach(setAside, ({ id, error }) =>
    failures.isolate(queue, setAsideCorrupt(queue, id, error, { kind: "active" }, nowMs))
  ).pipe(
    Effect.map((outcomes) => {
      // Into place from the last one back, so the places still to fill stay where they were. A message
      // that could not be set aside is its queue's failure (recorded), not a corrupt task.
      for (let j = setAside.length - 1; j >= 0; j--) {
        const c = outcomes[j]
        if (c) corrupt.splice(setAside[j]!.at, 0, c)
      }
    })
  )
}

/** `dequeueLease` of one queue as a script call, to send in another step's round trip (with buffers). */
export interface DequeueLeaseCall {
  readonly call: ScriptCall
  /** What the call leases (so a completion of the same queue can take it into its own call: completeMany). */
  readonly lease: RidingLease
  /** Reads the call's reply (as `dequeueLease` would). */
  readonly land: (reply: unknown) => Effect.Effect<DequeueLeaseResult, RedisError, Broker>
  /** The call failed with `error`: when no answer came (the script may have run), gives back what it leased; fails with `error`. */
  readonly lost: (error: RedisError) => Effect.Effect<never, RedisError, Broker>
}

/** How a ride's `dequeueLeaseCall` leases, beyond the `dequeueLease` step. */
export interface DequeueLeaseCallOptions {
  /** `connectionOutages` when the batch goes out (see `dequeueLeaseCall`). */
  readonly outagesAtSend?: number | undefined
  /** The worker's message sizes, told the size of the messages the call brings. */
  readonly sizes?: MessageSizes | undefined
  /**
   * Lease the large-message way (broker/leaseByIds.ts): the script in ids mode and the messages read
   * with SORT in the same MULTI (`ScriptCall.sorted`; only where the transport has `scriptSorted`).
   */
  readonly byIds?: boolean | undefined
}

/**
 * Prepares `dequeueLease({ queues: [queue], count, leaseMs })` for a batch; count >= 1, leaseMs >= 1000.
 * `outagesAtSend` (connectionOutages when the batch goes out): a reply landing after a reconnect
 * triggers the same check for tasks leased to nobody as `dequeueLease` does.
 */
export const dequeueLeaseCall = (
  queue: string,
  count: number,
  leaseMs: number,
  nowMs: number,
  options: DequeueLeaseCallOptions = {}
): DequeueLeaseCall => {
  const { outagesAtSend, sizes, byIds = false } = options
  const expiresSec = unixSeconds(nowMs + leaseMs)
  const score = leaseScore(expiresSec)
  const bound = bindScript(dequeueLeaseScript, {
    queue,
    count,
    leaseExpiresAtSec: expiresSec,
    nowMs,
    leaseScore: score,
    idsOnly: byIds
  })
  /** Starts the tasks of a decoded reply (as `dequeueLease` would). */
  const landDecoded = (decoded: DequeueLeaseReply): Effect.Effect<DequeueLeaseResult, never, Broker> => {
    const pairs = decoded.pairs
    const wait = decoded.limited
    const tasks: Array<LeasedTask> = []
    const corrupt: Array<CorruptTask> = []
    const failures = queueFailures<RedisError>()
    const sorted = Effect.as(
      sortLeased(queue, pairs, expiresSec, nowMs, tasks, corrupt, failures),
      (wait
        ? { tasks, corrupt, failedQueues: failures.failedQueues, limited: addLimited(undefined, wait, nowMs) }
        : {
            tasks,
            corrupt,
            failedQueues: failures.failedQueues
          }) satisfies DequeueLeaseResult as DequeueLeaseResult
    )
    if (sizes !== undefined) recordSizes(sizes, queue, pairs)
    if (outagesAtSend === undefined) return sorted
    return Effect.flatMap(connectionOutages, (outages) =>
      outages !== outagesAtSend
        ? Effect.andThen(
            releaseLeasedToNobody(
              queue,
              score,
              pairs.map((p) => p.id),
              nowMs
            ),
            sorted
          )
        : sorted
    )
  }
  return {
    call: byIds ? { ...bound.call, sorted: sortedLeaseRead(queue) } : bound.call,
    lease: { queue, count, leaseScore: score },
    lost: (error) =>
      (isLostReply(error) ? releaseLeasedToNobody(queue, score, [], nowMs) : Effect.void).pipe(
        Effect.andThen(Effect.fail(error))
      ),
    land: (reply) =>
      byIds
        ? // An ids-mode reply is [ids, SORT's messages]: read as the script-only reply would be.
          Array.isArray(reply) && reply.length === 2
          ? Effect.flatMap(landSortedLease(queue, reply[0], reply[1]), landDecoded)
          : Effect.fail(unexpectedReply("dequeueLease", reply, "the leased ids and SORT's messages"))
        : Effect.suspend(() => {
            const decoded = bound.decode(reply)
            return Result.isFailure(decoded) ? Effect.fail(decoded.failure) : landDecoded(decoded.success)
          })
  }
}
