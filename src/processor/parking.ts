/**
 * Parking: an idle worker is handed new tasks directly, without a dequeue round trip. When the
 * fetch loop's dequeue of a queue comes back short, the same script leaves a park token for this
 * worker, with room for as many tasks as that dequeue left slots free (lua/dequeueLease.lua); the
 * next tasks enqueued while that queue has no pending task, up to that room, are written as leased
 * to the worker under the token's score and pushed on the worker's hand-over list
 * (lua/includes/pushToParked.lua), where the worker waits with BLPOP (pushReceiver.ts). The
 * receiver hands the message here: this is the hand-over source's state (the intake's side of it
 * is intake/handoverSource.ts). While the fetch loop waits idle with a slot free, the task starts
 * at once from that callback (`HandoverIntake.startsNow`; the loop parks again only once the room
 * is used up, so at low load a task costs no dequeue); otherwise the fetch loop starts it
 * (`settle`), and with no slot free it waits while a fetch riding with completions is in flight
 * (that fetch usually comes back short: the queue was empty), else it goes back to the head of
 * pending (intake/slots.ts decides).
 *
 * Only a worker that is alive now is handed tasks: the enqueue checks the worker's liveness mark,
 * which its hand-over tick (handoverTick.ts) renews every `handoverTickMs` with a lifetime of
 * `livenessMarkTtlMs`, from this process's event loop (a frozen process or a blocked event loop
 * keeps its connections, and so its presence on pub/sub, but not its mark), and uses a token only
 * while its lease has 7 s or more left. The same tick confirms the hand-overs received here
 * (`takeReceived`): until then each is recorded as unconfirmed, and one still unconfirmed 5 s after
 * the hand-over goes back to pending, by any live worker's tick, without counting as an attempt
 * (lua/reclaimHandovers.lua). So a task handed to a worker that stalls right after waits a few
 * seconds, not the stall. A worker that notices it was stalled itself (`alive`, or a push arriving
 * while its tick is overdue) treats it as a reconnect: what it was handed and did not start may
 * have been reclaimed meanwhile, so it starts none of it and gives back what is still leased to it.
 *
 * Nothing is lost when a message is: every token a fetch left is remembered (the last few per
 * queue), and after the receiver's connection came back (a hand-over popped for a reply that was
 * lost), after a stall, or at shutdown, the tasks leased under those tokens that did not start
 * here go back to pending (releaseLeases, as for a dequeue whose reply was lost). An enqueue skips
 * a worker that died while parked (its presence channel has no subscriber) or stalled (no mark).
 *
 * Single node and Sentinel only: on a Cluster, PUBSUB NUMSUB counts only the node's own subscribers.
 */
import * as Effect from "effect/Effect"
import { Broker } from "../broker/Broker.js"
import type { ReceivedHandover } from "../broker/handovers.js"
import { leaseScoreExpirySec } from "../broker/releaseLeases.js"
import { publishWake } from "../broker/wake.js"
import type { RedisError } from "../redis/errors.js"
import { type CorruptTask, decodeStored } from "../steps/corrupt.js"
import {
  type DequeueLeaseResult,
  type LeasedTask,
  type Parking,
  releaseLeasedToNobody,
  sortLeased
} from "../steps/dequeueLease.js"
import { queueFailures } from "../steps/queueFailures.js"
import { queueKeys } from "../wire/keys.js"

/** How often a worker that parks renews its liveness mark and confirms what it was handed (ms). */
export const handoverTickMs = 1000
/**
 * How long a liveness mark lives (ms): a worker whose event loop has not run its tick for this long
 * is handed nothing more, and counts itself as stalled. Less than the 5 s a hand-over has to be
 * confirmed (lua/includes/pushToParked.lua), so a worker that does not count itself as stalled
 * has not been reclaimed from either.
 */
export const livenessMarkTtlMs = 3000

/** A task handed over (popped from the hand-over list). */
export interface Push {
  readonly queue: string
  readonly token: string
  readonly id: string
  readonly bytes: Uint8Array
}

const newline = 10

/** Reads a push message (see lua/includes/pushToParked.lua); undefined when it is not one. */
export const parsePush = (m: Buffer): Push | undefined => {
  const tokenEnd = m.indexOf(newline)
  if (tokenEnd <= 0) return undefined
  const token = m.toString("latin1", 0, tokenEnd)
  const qLenEnd = m.indexOf(newline, tokenEnd + 1)
  const qLen = Number(m.toString("latin1", tokenEnd + 1, qLenEnd))
  if (qLenEnd < 0 || !Number.isInteger(qLen) || qLenEnd + 1 + qLen > m.length) return undefined
  const queue = m.toString("utf8", qLenEnd + 1, qLenEnd + 1 + qLen)
  const idLenEnd = m.indexOf(newline, qLenEnd + 1 + qLen)
  const idLen = Number(m.toString("latin1", qLenEnd + 1 + qLen, idLenEnd))
  if (idLenEnd < 0 || !Number.isInteger(idLen) || idLenEnd + 1 + idLen > m.length) return undefined
  const id = m.toString("utf8", idLenEnd + 1, idLenEnd + 1 + idLen)
  return { queue, token, id, bytes: m.subarray(idLenEnd + 1 + idLen) }
}

/**
 * What the fetch loop does with a push: start it now (a slot is free), let it wait for a fetch in
 * flight to land (its slots were counted for that fetch), or give it back to pending.
 */
export type PushDecision = "start" | "wait" | "giveBack"

/**
 * How long a push may keep waiting for fetches in flight (each landing decides it again). Far below
 * a lease (30 s by default): a waiting push is leased to this worker but its lease is not extended.
 */
export const maxPushWaitMs = 1000

/**
 * Why hand-overs go back to pending, as the give-back's log line names them: a fault (logged as a
 * warning), or a worker that had no free slot (a normal event, logged at debug level).
 */
const giveBackReasons = {
  unstarted: { what: "a hand-over to this worker", log: Effect.logWarning },
  noSlot: { what: "a hand-over to this worker, which had no free slot,", log: Effect.logDebug },
  expired: { what: "a hand-over that reached this worker after its lease ran out", log: Effect.logWarning }
} as const

/** Tokens remembered per queue: a push for an older one has had ample time to arrive. */
const tokensKept = 4
/** Released tokens remembered (a push still on its way under one is dropped: its task went back to pending). */
const releasedKept = 256

/**
 * What the parking state needs of the intake it feeds (intake/handoverSource.ts), given when it is
 * made: a hand-over that finds the fetch loop idle with a free slot starts at once, from the
 * receiver's callback, instead of waiting for the loop to wake and `settle`.
 */
export interface HandoverIntake {
  /** Wakes the fetch loop: hand-overs wait for it (or a reconnect is to be handled). */
  readonly raise: () => void
  /** Now, on the worker's Clock (also what tells a push that arrives while the hand-over tick is overdue: a stall). */
  readonly nowMs: () => number
  /** Whether a hand-over may start now, from the receiver's callback: the loop waits idle with a slot free. */
  readonly startsNow: () => boolean
  /** Registers and starts the task's attempt (its fiber runs up to its first wait). */
  readonly start: (task: LeasedTask) => void
  /** Wakes the idle loop to park again: the token the task came under has no room left. */
  readonly repark: () => void
}

export interface ParkingState {
  /** What the fetch loop's dequeues pass (`leaseFrom`). */
  readonly parking: Parking
  /** Takes one hand-over (from the receiver's BLPOP). */
  readonly onPush: (message: Buffer) => void
  /**
   * The hand-over tick ran at `nowMs`: when the one before was more than `livenessMarkTtlMs`
   * earlier, this worker was stalled (see `ParkingState`'s file notes) and handles it as a reconnect.
   */
  readonly alive: (nowMs: number) => void
  /** The hand-overs received since the last call, by queue (to confirm; taken off here). */
  readonly takeReceived: () => Map<string, Array<ReceivedHandover>>
  /** Gives back hand-overs `takeReceived` returned whose confirmation failed (confirmed at the next tick). */
  readonly keepReceived: (queue: string, received: ReadonlyArray<ReceivedHandover>) => void
  /** A connection hand-overs come on came back: one may have been lost. */
  readonly onReconnect: () => void
  /** Whether pushes wait, or a reconnect is to be handled (the fetch loop then calls `settle`). */
  readonly pending: () => boolean
  /**
   * Takes the pushes received, each as `decide` says: started ones are returned as leased tasks
   * (the corrupt ones set aside), waiting ones stay for the next call, the others go back to the
   * head of pending. After a reconnect, leaves every queue and gives back what was handed to this
   * worker and did not arrive (`leave`).
   */
  readonly settle: (decide: () => PushDecision, nowMs: number) => Effect.Effect<DequeueLeaseResult, never, Broker>
  /**
   * Leaves every queue (no more pushes) and gives back to pending whatever was handed to this
   * worker under the tokens it left and did not start here. At shutdown; after a reconnect.
   */
  readonly leave: (nowMs: number) => Effect.Effect<void, never, Broker>
}

interface Token {
  readonly queue: string
  readonly token: string
  /** The ids of the tasks handed over under it that started here. */
  readonly started: Array<string>
  /** How many tasks may be handed over under it (known once its dequeue's reply came back short). */
  room?: number
}

/** The state of one worker's parking (`makeParking`), shared by the functions below. */
interface State {
  readonly server: string
  readonly queues: ReadonlyArray<string>
  readonly intake: HandoverIntake
  /** Per queue, the last tokens left. */
  readonly tokens: Map<string, Array<Token>>
  readonly released: Set<string>
  inbox: Array<Push>
  /** When each waiting push (by token) was first told to wait. */
  readonly waitingSince: Map<string, number>
  reconnected: boolean
  /** Per queue, the hand-overs received since the tick last took them. */
  received: Map<string, Array<ReceivedHandover>>
  /** When the hand-over tick last ran (undefined before its first run), and how long a stall it last noticed lasted. */
  aliveAtMs: number | undefined
  stallMs: number | undefined
}

const markReleased = (s: State, token: string) => {
  s.released.add(token)
  if (s.released.size > releasedKept) s.released.delete(s.released.values().next().value!)
}

const findToken = (s: State, queue: string, token: string): Token | undefined =>
  s.tokens.get(queue)?.find((x) => x.token === token)

/**
 * This worker was stalled (its event loop did not run its tick for longer than its liveness mark
 * lives): what was handed to it and did not start may have been reclaimed and given to another
 * worker, so none of it starts here. Every token left so far is released now (a push under one is
 * dropped from here on), and the fetch loop handles it as a reconnect (`settle` → `leave`: what
 * is still leased under those tokens goes back to pending).
 */
const stalled = (s: State, now: number) => {
  s.stallMs = s.aliveAtMs === undefined ? 0 : now - s.aliveAtMs
  s.aliveAtMs = now
  for (const list of s.tokens.values()) for (const t of list) markReleased(s, t.token)
  s.reconnected = true
  s.intake.raise()
}

const overdue = (s: State, now: number) => s.aliveAtMs !== undefined && now - s.aliveAtMs > livenessMarkTtlMs

/**
 * Starts `push` through the intake at once when it can, as `settle` would with a "start" decision:
 * the loop idle with a slot free, its lease not run out, its message readable (an unreadable one,
 * and anything else, goes the usual way). Returns whether it started.
 */
const startNow = (s: State, push: Push): boolean => {
  const intake = s.intake
  if (!intake.startsNow()) return false
  const expiresAtMs = leaseScoreExpirySec(push.token) * 1000
  if (expiresAtMs <= intake.nowMs()) return false
  const decoded = decodeStored(push.queue, push.id, push.bytes)
  if (!("msg" in decoded)) return false
  const list = s.tokens.get(push.queue)
  const t = list?.find((x) => x.token === push.token)
  t?.started.push(push.id)
  intake.start({ msg: decoded.msg, leaseExpiresAtMs: expiresAtMs })
  // The queue's latest token used up (or one not known here): the idle loop parks again (a
  // dequeue). While room is left, the queue's next task comes the same way, without one; a task
  // under an older token leaves the latest one as it is.
  if (t === undefined || (t === list![list!.length - 1] && t.started.length >= (t.room ?? 1))) intake.repark()
  return true
}

/** Takes one hand-over: recorded for confirmation, then started at once, dropped (released token), or queued for `settle`. */
const onPush = (s: State, message: Buffer) => {
  const push = parsePush(message)
  if (!push) return
  const list = s.received.get(push.queue)
  const record = { token: push.token, id: push.id }
  if (list === undefined) s.received.set(push.queue, [record])
  else list.push(record)
  const now = s.intake.nowMs()
  if (overdue(s, now)) stalled(s, now)
  if (s.released.has(push.token)) return
  // In arrival order: only when nothing waits before it (and no reconnect is to be handled).
  if (s.inbox.length === 0 && !s.reconnected && startNow(s, push)) return
  s.inbox.push(push)
  s.intake.raise()
}

/**
 * Gives back what was handed over under `token` and did not start here; wakes the workers when
 * something went back. Logged as a warning when the reason is a fault (a lost message, a
 * reconnect), as debug when it is a hand-over this worker had no free slot for.
 */
const release = (
  queue: string,
  token: string,
  received: ReadonlyArray<string>,
  nowMs: number,
  why: keyof typeof giveBackReasons = "unstarted"
) => {
  const reason = giveBackReasons[why]
  return Effect.flatMap(releaseLeasedToNobody(queue, token, received, nowMs, reason.what, reason.log), (n) =>
    n > 0 ? Effect.asVoid(publishWake([queue]).pipe(Effect.ignore)) : Effect.void
  )
}

/** Takes this worker off every queue's parked workers, its park room and its hand-over list. */
const unpark = (server: string, queues: ReadonlyArray<string>) =>
  Effect.flatMap(Broker, ({ redis }) =>
    Effect.forEach(
      queues,
      (q) =>
        Effect.ignore(
          Effect.andThen(
            redis.command("leave parked queue", ["HDEL", queueKeys(q).parked, server]),
            Effect.andThen(
              redis.command("drop park room", ["HDEL", queueKeys(q).parkRoom, server]),
              redis.command("drop hand-over list", ["DEL", queueKeys(q).pushList(server)])
            )
          )
        ),
      { discard: true }
    )
  )

const leave = (s: State, nowMs: number) =>
  Effect.suspend(() => {
    // Marked first: a push under one of these tokens that arrives from now on is dropped (the release takes its task back).
    const all = [...s.tokens.values()].flat()
    s.tokens.clear()
    for (const t of all) markReleased(s, t.token)
    // No more hand-overs (the token is gone), then none left waiting: they are under the tokens released below.
    return Effect.andThen(
      unpark(s.server, s.queues),
      Effect.forEach(all, (t) => release(t.queue, t.token, t.started, nowMs), { discard: true })
    )
  })

/** A push `settle` does not start: given back to pending (its lease ran out, or `decide` said so). */
interface Refused {
  readonly push: Push
  readonly expired: boolean
}

/**
 * Sorts the inbox as `decide` says: the pushes to start (their start recorded on their token), the
 * ones to give back (their token released), and the ones to keep waiting (left in the inbox).
 */
const sortInbox = (s: State, decide: () => PushDecision, nowMs: number) => {
  const pushes = s.inbox
  s.inbox = []
  const accepted: Array<Push> = []
  const refused: Array<Refused> = []
  for (const push of pushes) {
    if (s.released.has(push.token)) {
      s.waitingSince.delete(push.token)
      continue
    }
    // A push whose lease has already run out by our clock (it waited in the socket or the
    // inbox for longer than a lease; the token was left a poll interval ago) is not started:
    // the recoverer may hand it to another worker any moment. It goes back to pending.
    const expired = leaseScoreExpirySec(push.token) * 1000 <= nowMs
    let decision: PushDecision = expired ? "giveBack" : decide()
    if (decision === "wait") {
      const since = s.waitingSince.get(push.token)
      if (since === undefined) s.waitingSince.set(push.token, nowMs)
      if (since === undefined || nowMs - since < maxPushWaitMs) {
        s.inbox.push(push)
        continue
      }
      decision = "giveBack"
    }
    s.waitingSince.delete(push.token)
    if (decision === "giveBack") {
      refused.push({ push, expired })
      markReleased(s, push.token)
      continue
    }
    accepted.push(push)
    findToken(s, push.queue, push.token)?.started.push(push.id)
  }
  return { accepted, refused }
}

const settle = (
  s: State,
  decide: () => PushDecision,
  nowMs: number
): Effect.Effect<DequeueLeaseResult, never, Broker> =>
  Effect.suspend(() => {
    const { accepted, refused } = sortInbox(s, decide, nowMs)
    const wasReconnected = s.reconnected
    s.reconnected = false
    const stall = s.stallMs
    s.stallMs = undefined
    // Read as a dequeue's reply is (the corrupt ones set aside, a failure to do so its queue's).
    const tasks: Array<LeasedTask> = []
    const corrupt: Array<CorruptTask> = []
    const failures = queueFailures<RedisError>()
    const result = (): DequeueLeaseResult => ({ tasks, corrupt, failedQueues: failures.failedQueues })
    // The usual case, one hand-over started and nothing else to do: no Effect step unless its message is unusable.
    if (accepted.length === 1 && refused.length === 0 && !wasReconnected) {
      const p = accepted[0]!
      const sorted = sortLeased(
        p.queue,
        [{ id: p.id, bytes: p.bytes }],
        leaseScoreExpirySec(p.token),
        nowMs,
        tasks,
        corrupt,
        failures
      )
      return sorted === Effect.void ? Effect.succeed(result()) : Effect.map(sorted, result)
    }
    const read = Effect.forEach(
      accepted,
      (p) =>
        sortLeased(
          p.queue,
          [{ id: p.id, bytes: p.bytes }],
          leaseScoreExpirySec(p.token),
          nowMs,
          tasks,
          corrupt,
          failures
        ),
      { discard: true }
    )
    const noteStall =
      stall === undefined
        ? Effect.void
        : Effect.logWarning(
            `this worker was stalled (its event loop did not run for ${stall} ms): hand-overs to it that did not start are given back, not started`
          )
    return Effect.forEach(
      refused,
      (r) => release(r.push.queue, r.push.token, [], nowMs, r.expired ? "expired" : "noSlot"),
      { discard: true }
    ).pipe(
      Effect.andThen(noteStall),
      Effect.andThen(read),
      Effect.andThen(wasReconnected ? leave(s, nowMs) : Effect.void),
      Effect.map((): DequeueLeaseResult => {
        // Refused tasks went back to pending: look again once a slot is free.
        if (refused.length > 0) s.intake.raise()
        return result()
      })
    )
  })

/** The `Parking` the fetch loop's dequeues pass: each token left is remembered (the last few per queue), with its room. */
const parkingOf = (s: State): Parking => ({
  server: s.server,
  parked: (queue, token) => {
    const left: Token = { queue, token, started: [] }
    const list = s.tokens.get(queue)
    if (list === undefined) s.tokens.set(queue, [left])
    else {
      list.push(left)
      if (list.length > tokensKept) list.shift()
    }
  },
  room: (queue, token, room) => {
    const t = findToken(s, queue, token)
    if (t) t.room = room
  }
})

/** The parking state of worker `server` serving `queues`, feeding `intake`. */
export const makeParking = (server: string, queues: ReadonlyArray<string>, intake: HandoverIntake): ParkingState => {
  const s: State = {
    server,
    queues,
    intake,
    tokens: new Map(),
    released: new Set(),
    inbox: [],
    waitingSince: new Map(),
    reconnected: false,
    received: new Map(),
    aliveAtMs: undefined,
    stallMs: undefined
  }
  return {
    parking: parkingOf(s),
    onPush: (message) => onPush(s, message),
    alive: (now) => {
      if (overdue(s, now)) stalled(s, now)
      else s.aliveAtMs = now
    },
    takeReceived: () => {
      const taken = s.received
      s.received = new Map()
      return taken
    },
    keepReceived: (queue, kept) => {
      const list = s.received.get(queue)
      s.received.set(queue, list === undefined ? [...kept] : [...kept, ...list])
    },
    onReconnect: () => {
      s.reconnected = true
      intake.raise()
    },
    pending: () => s.inbox.length > 0 || s.reconnected,
    settle: (decide, nowMs) => settle(s, decide, nowMs),
    leave: (nowMs) => leave(s, nowMs)
  }
}
