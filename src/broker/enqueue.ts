/**
 * Writing new tasks: scripts `enqueue` (→ pending), `schedule` (→ scheduled), `addToGroup`
 * (→ aggregating), each with an optional uniqueness lock, plus `registerQueue` (SADD to
 * `asynq:queues`). The queue registration goes out in the same round trip as the write, and only
 * while the broker has not seen it succeed in the last minute (`Broker.knownQueues`).
 *
 * Round trips: on a single node (or Sentinel) every write of a call, for all queues, plus the
 * registrations, is one pipeline (the pending tasks of one queue in one enqueueBatch call). On a Redis Cluster the Redis service pipelines them per slot
 * (per queue, and one for the registrations), all sent at once.
 *
 * A lost reply: a write whose round trip failed without an answer from Redis (the connection
 * dropped; ioredis aborts the rest of a pipeline that was partly answered) may or may not have
 * run. It is sent again as the very same write (same id, same message bytes); the scripts answer a
 * write whose task hash already holds that message as written (see lua/includes/newTask.lua), so
 * the resend never writes a second task nor reports a false TaskIdConflict/DuplicateTask. The
 * scripts compare messages, not bytes (lua/includes/sameTaskMessage.lua): the same task enqueued
 * again over one that Go asynq wrote (its headers in Go's random map order) is a success too.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisError } from "../redis/errors.js"
import type { RedisShape, ScriptArg } from "../redis/Redis.js"
import { allQueues, queueKeys, type TaskState } from "../wire/keys.js"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { bytesArg } from "./args.js"
import { Broker, type BrokerShape } from "./Broker.js"
import { doneOr, unexpectedReply } from "./decode.js"
import { isLostReply } from "./lostReply.js"
import type { DuplicateTask, TaskIdConflict } from "./errors.js"
import { type BoundScript, bindScript, defineScript, runScripts } from "./script.js"
import { unixMsString, unixNanosString, unixSeconds } from "./time.js"
import { addToGroupLua, enqueueBatchLua, enqueueLua, registerQueueLua, scheduleLua } from "../redis/lua.generated.js"

/** Where a new task goes. */
export type WriteTarget =
  | { readonly state: "pending" }
  | { readonly state: "scheduled"; readonly processAtMs: number }
  | { readonly state: "aggregating"; readonly group: string }
  /** Waiting for its limit key (state "scheduled" under a sentinel score: lua/includes/writeKeyedTask.lua). */
  | { readonly state: "keyed"; readonly limitKey: string }

/** One new task to write. `msg.uniqueKey` must be the lock key when `uniqueLockTtlMs` is set. */
export interface TaskWrite {
  readonly msg: TaskMessage
  readonly target: WriteTarget
  /** Take the uniqueness lock `msg.uniqueKey` for this long (ms, >= 1). */
  readonly uniqueLockTtlMs?: number | undefined
  /** The write time (ms): pending_since, group score. */
  readonly nowMs: number
  /** `msg`'s bytes when they were made with it (`encodeTaskMessage(msg)`'s bytes: steps/enqueue.ts); else encoded here. */
  readonly encoded?: Uint8Array | undefined
}

export type WriteError = DuplicateTask | TaskIdConflict | RedisError

// The tasks of one call share their write time: convert it once (BigInt arithmetic).
let lastNowMs = Number.NaN
let lastNowNanos = ""
const pendingSince = (nowMs: number): string => {
  if (nowMs !== lastNowMs) {
    lastNowNanos = unixNanosString(nowMs)
    lastNowMs = nowMs
  }
  return lastNowNanos
}

/**
 * The keys of a pending write without a uniqueness lock, one frozen list per queue: the same list
 * every time, so a single node's script call reuses the bytes it built for it (ioredisService.ts).
 */
const pendingKeys = new Map<string, ReadonlyArray<string>>()
const pendingKeysOf = (queue: string): ReadonlyArray<string> => {
  let keys = pendingKeys.get(queue)
  if (keys === undefined) {
    const k = queueKeys(queue)
    keys = Object.freeze([k.taskPrefix, k.pending])
    if (pendingKeys.size < 10_000) pendingKeys.set(queue, keys)
  }
  return keys
}

const writeKeys = (w: TaskWrite): ReadonlyArray<string> => {
  const t = w.target
  if (t.state === "pending" && w.uniqueLockTtlMs === undefined) return pendingKeysOf(w.msg.queue)
  const k = queueKeys(w.msg.queue)
  const keys =
    t.state === "pending"
      ? [k.taskPrefix, k.pending]
      : t.state === "scheduled"
        ? [k.taskPrefix, k.scheduled]
        : t.state === "keyed"
          ? [k.taskPrefix, k.pending]
          : [k.taskPrefix, k.group(t.group), k.allGroups]
  if (w.uniqueLockTtlMs !== undefined) keys.push(w.msg.uniqueKey)
  return keys
}

const writeArgs = (w: TaskWrite): ReadonlyArray<ScriptArg> => {
  const encoded = w.encoded ?? encodeTaskMessage(w.msg)
  const bytes = bytesArg(encoded)
  const t = w.target
  if (t.state === "keyed")
    return [
      w.msg.id,
      bytes,
      pendingSince(w.nowMs),
      w.msg.queue,
      w.uniqueLockTtlMs === undefined ? "" : Math.max(1, Math.ceil(w.uniqueLockTtlMs)),
      t.limitKey
    ]
  const args: Array<ScriptArg> =
    t.state === "pending"
      ? [w.msg.id, bytes, pendingSince(w.nowMs), w.msg.queue]
      : t.state === "scheduled"
        ? [w.msg.id, bytes, unixMsString(t.processAtMs), w.msg.queue]
        : [w.msg.id, bytes, unixSeconds(w.nowMs), t.group]
  if (w.uniqueLockTtlMs !== undefined) args.push(Math.max(1, Math.ceil(w.uniqueLockTtlMs)))
  return args
}

/** A write script's reply: the task's new state, or TaskIdConflict/DuplicateTask (see replyCodes). */
const writeDecode =
  (script: "enqueue" | "schedule" | "addToGroup") =>
  (reply: unknown, w: TaskWrite): Result.Result<TaskState, WriteError> =>
    doneOr(script, reply, w, w.target.state as TaskState)

/** Script `enqueue`: a new task -> pending (with its uniqueness lock, if any). */
export const enqueueScript = defineScript<TaskWrite, TaskState, DuplicateTask | TaskIdConflict>({
  name: "enqueue",
  source: enqueueLua,
  buffers: false,
  keys: writeKeys,
  args: writeArgs,
  decode: writeDecode("enqueue")
})
/** Script `schedule`: a new task -> scheduled. */
export const scheduleScript = defineScript<TaskWrite, TaskState, DuplicateTask | TaskIdConflict>({
  name: "schedule",
  source: scheduleLua,
  buffers: false,
  keys: writeKeys,
  args: writeArgs,
  decode: writeDecode("schedule")
})
/** Script `addToGroup`: a new task -> its aggregation group. */
export const addToGroupScript = defineScript<TaskWrite, TaskState, DuplicateTask | TaskIdConflict>({
  name: "addToGroup",
  source: addToGroupLua,
  buffers: false,
  keys: writeKeys,
  args: writeArgs,
  decode: writeDecode("addToGroup")
})

/**
 * Script `enqueue` for a new task with a limit key: written as waiting for its key (state
 * "scheduled", lua/includes/writeKeyedTask.lua; with its uniqueness lock, if any).
 */
export const enqueueKeyedScript = defineScript<TaskWrite, TaskState, DuplicateTask | TaskIdConflict>({
  name: "enqueue",
  source: enqueueLua,
  buffers: false,
  keys: writeKeys,
  args: writeArgs,
  decode: (reply, w) => doneOr("enqueue", reply, w, "scheduled" as TaskState)
})

const writeScripts = {
  pending: enqueueScript,
  scheduled: scheduleScript,
  aggregating: addToGroupScript,
  keyed: enqueueKeyedScript
} as const

/** The bound write script of one task (by its target state). */
export const bindTaskWrite = (w: TaskWrite): BoundScript<TaskState, DuplicateTask | TaskIdConflict> =>
  bindScript(writeScripts[w.target.state], w)

/** Script `enqueueBatch`: `enqueue` for several new tasks of one queue written at the same time, in order (each its own outcome). */
export const enqueueBatchScript = defineScript<
  ReadonlyArray<TaskWrite>,
  ReadonlyArray<Result.Result<TaskState, WriteError>>
>({
  name: "enqueueBatch",
  source: enqueueBatchLua,
  buffers: false,
  keys: (ws) => {
    const k = queueKeys(ws[0]!.msg.queue)
    const keys = [k.taskPrefix, k.pending]
    for (const w of ws) if (w.uniqueLockTtlMs !== undefined) keys.push(w.msg.uniqueKey)
    return keys
  },
  args: (ws) => {
    const args: Array<ScriptArg> = [pendingSince(ws[0]!.nowMs), ws[0]!.msg.queue, ws.length]
    let locks: Array<number> | undefined
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i]!
      args.push(w.msg.id, bytesArg(w.encoded ?? encodeTaskMessage(w.msg)))
      if (w.uniqueLockTtlMs !== undefined) (locks ??= []).push(i + 1, Math.max(1, Math.ceil(w.uniqueLockTtlMs)))
    }
    if (locks !== undefined) for (const x of locks) args.push(x)
    return args
  },
  decode: (reply, ws) => {
    if (!Array.isArray(reply) || reply.length !== ws.length)
      return Result.fail(unexpectedReply("enqueueBatch", reply, `an array of ${ws.length} integers`))
    const out: Array<Result.Result<TaskState, WriteError>> = new Array(ws.length)
    for (let i = 0; i < ws.length; i++) {
      const r = doneOr("enqueue", reply[i], ws[i]!, "pending" as TaskState)
      if (Result.isFailure(r) && r.failure._tag === "RedisError")
        return Result.fail(unexpectedReply("enqueueBatch", reply, "integers 1, 0 or -1"))
      out[i] = r
    }
    return Result.succeed(out)
  }
})

/** Most tasks in one enqueueBatch call. */
const maxBatchWrite = 1000

/**
 * Most message bytes in one enqueueBatch call (a call holding one larger message still goes). A
 * script runs alone in Redis, and Redis 7 hashes every byte of every argument it hands a script: a
 * call of a thousand 100 KB messages would hold every other client for about a second (and cost
 * Redis twice the CPU per task of calls of a few). The calls of one enqueueMany still go in one
 * round trip.
 */
const maxBatchBytes = 1024 * 1024

/** A write's message size, for `maxBatchBytes`: its bytes when encoded already, else its payload's. */
const writeBytes = (w: TaskWrite): number => w.encoded?.length ?? w.msg.payload?.length ?? 0

/**
 * The script calls of a call's writes: the pending writes of one queue and write time (two or more)
 * in enqueueBatch calls, each other write in its own call. `at` maps each call back to its writes.
 */
const bindWrites = (ws: ReadonlyArray<TaskWrite>) => {
  // Pending writes by queue (the writes of one call share their time: one string key per queue
  // then; a write with another time gets a key with its time).
  const groups = new Map<string, Array<number>>()
  const nowMs = ws.length === 0 ? 0 : ws[0]!.nowMs
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!
    if (w.target.state !== "pending") continue
    const key = w.nowMs === nowMs ? w.msg.queue : `${w.msg.queue}\u0000${w.nowMs}`
    const g = groups.get(key)
    if (g) g.push(i)
    else groups.set(key, [i])
  }
  const bound: Array<BoundScript<TaskState | ReadonlyArray<Result.Result<TaskState, WriteError>>, WriteError>> = []
  const at: Array<ReadonlyArray<number> | number> = []
  const batched = new Uint8Array(ws.length)
  for (const g of groups.values()) {
    if (g.length < 2) continue
    for (let from = 0; from < g.length; ) {
      let to = from
      let bytes = 0
      while (to < g.length && to - from < maxBatchWrite) {
        bytes += writeBytes(ws[g[to]!]!)
        if (bytes > maxBatchBytes && to > from) break
        to++
      }
      const part = from === 0 && to === g.length ? g : g.slice(from, to)
      from = to
      const batch: Array<TaskWrite> = new Array(part.length)
      for (let j = 0; j < part.length; j++) {
        batch[j] = ws[part[j]!]!
        batched[part[j]!] = 1
      }
      bound.push(bindScript(enqueueBatchScript, batch))
      at.push(part)
    }
  }
  for (let i = 0; i < ws.length; i++) {
    if (batched[i] === 1) continue
    bound.push(bindTaskWrite(ws[i]!))
    at.push(i)
  }
  return { bound, at }
}

/** Each write's outcome, in input order, from the outcomes of the calls bindWrites made. */
const spreadOutcomes = (
  count: number,
  at: ReadonlyArray<ReadonlyArray<number> | number>,
  outcomes: ReadonlyArray<Result.Result<TaskState | ReadonlyArray<Result.Result<TaskState, WriteError>>, WriteError>>
): ReadonlyArray<Result.Result<TaskState, WriteError>> => {
  const out: Array<Result.Result<TaskState, WriteError>> = new Array(count)
  at.forEach((where, c) => {
    const o = outcomes[c]!
    if (typeof where === "number") out[where] = o as Result.Result<TaskState, WriteError>
    else if (Result.isFailure(o)) for (const i of where) out[i] = o as Result.Result<never, WriteError>
    else where.forEach((i, j) => (out[i] = (o.success as ReadonlyArray<Result.Result<TaskState, WriteError>>)[j]!))
  })
  return out
}

/**
 * How many more times a write whose reply was lost is sent (as the same write). Over ioredis,
 * ioredis itself also waits for the reconnection (up to `maxRetriesPerRequest` attempts) before a
 * send fails; the light transport opens a new connection for the resend.
 */
const lostReplyResends = 2

/** A failure without an answer from Redis: the write may have run. An error reply (ReplyError) is an answer. */
const replyLost = (e: WriteError): boolean => isLostReply(e)

/** Sends again, as the same writes, those whose reply was lost; each keeps its last outcome. */
const resendLostReplies = Effect.fnUntraced(function* (
  ws: ReadonlyArray<TaskWrite>,
  first: ReadonlyArray<Result.Result<TaskState, WriteError>>
) {
  // The usual case, every reply arrived: no copy.
  if (!first.some((o) => Result.isFailure(o) && replyLost(o.failure))) return first
  const outcomes = [...first]
  for (let resend = 0; resend < lostReplyResends; resend++) {
    const lost = outcomes.flatMap((o, i) => (Result.isFailure(o) && replyLost(o.failure) ? [i] : []))
    if (lost.length === 0) break
    const again = yield* runScripts(lost.map((i) => bindTaskWrite(ws[i]!)))
    lost.forEach((i, j) => (outcomes[i] = again[j]!))
  }
  return outcomes
})

/** Script `registerQueue`: adds a queue to `asynq:queues`. */
export const registerQueueScript = defineScript<string, void>({
  name: "registerQueue",
  source: registerQueueLua,
  buffers: false,
  keys: () => [allQueues],
  args: (queue) => [queue],
  decode: () => Result.succeed(undefined)
})

/**
 * Adds `queue` to `asynq:queues`, sent now on the broker's connection (ahead of a write sent after
 * it), without an Effect run: the Promise client's first enqueue to a queue. Marks the queue known
 * once Redis answered; a failure goes to `onFailure` (the next enqueue to the queue tries again).
 */
export const registerQueuePromise = (
  broker: BrokerShape,
  queue: string,
  nowMs: number,
  onFailure: (e: RedisError) => void
): void => {
  broker.redis
    .scriptPromise(registerQueueScript.name, registerQueueScript.keys(queue), registerQueueScript.args(queue), false)
    .then(() => broker.knownQueues.add(queue, nowMs), onFailure)
}

/**
 * Writes new tasks (the pending ones of one queue together in enqueueBatch calls, the others one
 * script call each) and registers their queues, in one batch (see the
 * module comment and `RedisShape.scriptBatch`). Each task gets its own outcome; a failed round
 * trip fails only the tasks it carried. Never fails as a whole.
 */
export const writeTasks = Effect.fnUntraced(function* (ws: ReadonlyArray<TaskWrite>) {
  const { knownQueues } = yield* Broker
  if (ws.length === 0) return []
  const now = ws[0]!.nowMs
  const toRegister = [...new Set(ws.map((w) => w.msg.queue))].filter((q) => !knownQueues.has(q, now))
  const { bound, at } = bindWrites(ws)
  if (toRegister.length === 0)
    return yield* resendLostReplies(ws, spreadOutcomes(ws.length, at, yield* runScripts(bound)))
  const registrations = toRegister.map((q) => bindScript(registerQueueScript, q))
  const outcomes = yield* runScripts([...registrations, ...bound])
  let failedRegistration: RedisError | undefined
  toRegister.forEach((q, i) => {
    const r = outcomes[i]!
    if (Result.isSuccess(r)) knownQueues.add(q, now)
    else failedRegistration ??= r.failure as RedisError
  })
  if (failedRegistration) {
    // The tasks themselves may be written; the next enqueue to the queue tries the SADD again.
    yield* Effect.logWarning(`could not add queue(s) to ${allQueues}: ${failedRegistration.message}`)
  }
  return yield* resendLostReplies(
    ws,
    spreadOutcomes(
      ws.length,
      at,
      outcomes.slice(toRegister.length) as ReadonlyArray<
        Result.Result<TaskState | ReadonlyArray<Result.Result<TaskState, WriteError>>, WriteError>
      >
    )
  )
})

/**
 * One write to a queue known to be registered: a single script call (a plain EVALSHA), sent again
 * as the same write (the same arguments) while its reply is lost, at most `lostReplyResends` more
 * times. Its outcome goes to `onDone`, whose value (or throw) settles the Promise; a caller that
 * maps the outcome anyway saves a Promise hop. The Effect step (`writeTask`, through
 * `writeRegistered`) and the Promise client (steps/enqueue.ts `enqueuePromise`) both run it.
 */
export const sendRegisteredWrite = <A>(
  redis: RedisShape,
  w: TaskWrite,
  onDone: (outcome: Result.Result<TaskState, WriteError>) => A
): Promise<A> => {
  const def = writeScripts[w.target.state]
  let keys: ReadonlyArray<string>
  let args: ReadonlyArray<ScriptArg>
  try {
    keys = def.keys(w)
    args = def.args(w)
  } catch (e) {
    return Promise.reject(e)
  }
  const attempt = (resendsLeft: number): Promise<A> =>
    redis.scriptPromise(def.name, keys, args, def.buffers).then(
      (reply) => onDone(def.decode(reply, w)),
      (e: RedisError) => (resendsLeft > 0 && replyLost(e) ? attempt(resendsLeft - 1) : onDone(Result.fail(e)))
    )
  return attempt(lostReplyResends)
}

const outcome = (r: Result.Result<TaskState, WriteError>) => r

/** `sendRegisteredWrite` giving the outcome itself; the Promise never rejects (a defect aside). */
export const writeRegistered = (redis: RedisShape, w: TaskWrite): Promise<Result.Result<TaskState, WriteError>> =>
  sendRegisteredWrite(redis, w, outcome)

/**
 * Writes one new task (and registers its queue if needed) in one round trip. Once the queue is
 * known to be registered that is a single script call (a plain EVALSHA).
 */
export const writeTask = Effect.fnUntraced(function* (w: TaskWrite) {
  const { knownQueues, redis } = yield* Broker
  if (!knownQueues.has(w.msg.queue, w.nowMs)) {
    const [outcome] = yield* writeTasks([w])
    return yield* Effect.fromResult(outcome!)
  }
  return yield* Effect.fromResult(yield* Effect.promise(() => writeRegistered(redis, w)))
})
