/**
 * Writing new tasks: scripts `enqueue` (→ pending), `schedule` (→ scheduled), `addToGroup`
 * (→ aggregating), each with an optional uniqueness lock, plus `registerQueue` (SADD to
 * `asynq:queues`). The queue registration goes out in the same round trip as the write, and only
 * while the broker has not seen it succeed in the last minute (`Broker.knownQueues`).
 *
 * Round trips: on a single node (or Sentinel) every write of a call, for all queues, plus the
 * registrations, is one pipeline. On a Redis Cluster the writes are pipelined per queue (one slot
 * each) and the registrations (another slot) are sent alongside, all at once.
 */
import { Clock, Effect, Result } from "effect"
import { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import { allQueues, queueKeys, type TaskState } from "../wire/keys.js"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { DuplicateTask, TaskIdConflict } from "./errors.js"
import { unixNanosString, unixSeconds } from "./time.js"

/** Where a new task goes. */
export type WriteTarget =
  | { readonly state: "pending" }
  | { readonly state: "scheduled"; readonly processAtMs: number }
  | { readonly state: "aggregating"; readonly group: string }

/** One new task to write. `msg.uniqueKey` must be the lock key when `uniqueLockTtlMs` is set. */
export interface TaskWrite {
  readonly msg: TaskMessage
  readonly target: WriteTarget
  /** Take the uniqueness lock `msg.uniqueKey` for this long (ms, >= 1). */
  readonly uniqueLockTtlMs?: number | undefined
  /** The write time (ms): pending_since, group score. */
  readonly nowMs: number
}

export type WriteError = DuplicateTask | TaskIdConflict | RedisError

const scriptOf = { pending: "enqueue", scheduled: "schedule", aggregating: "addToGroup" } as const

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

/** The script call that writes one task. */
export const taskWriteCall = (w: TaskWrite): ScriptCall => {
  const k = queueKeys(w.msg.queue)
  const encoded = encodeTaskMessage(w.msg)
  const bytes = Buffer.isBuffer(encoded) ? encoded : bytesArg(encoded)
  const lock = w.uniqueLockTtlMs === undefined ? [] : [w.msg.uniqueKey]
  const ttl = w.uniqueLockTtlMs === undefined ? [] : [Math.max(1, Math.ceil(w.uniqueLockTtlMs))]
  const t = w.target
  switch (t.state) {
    case "pending":
      return { script: "enqueue", keys: [k.taskPrefix, k.pending, ...lock], args: [w.msg.id, bytes, pendingSince(w.nowMs), w.msg.queue, ...ttl] }
    case "scheduled":
      return { script: "schedule", keys: [k.taskPrefix, k.scheduled, ...lock], args: [w.msg.id, bytes, unixSeconds(t.processAtMs), ...ttl] }
    case "aggregating":
      return {
        script: "addToGroup",
        keys: [k.taskPrefix, k.group(t.group), k.allGroups, ...lock],
        args: [w.msg.id, bytes, unixSeconds(w.nowMs), t.group, ...ttl]
      }
  }
}

/** The call that adds a queue to `asynq:queues`. */
export const registerQueueCall = (queue: string): ScriptCall => ({ script: "registerQueue", keys: [allQueues], args: [queue] })

/** A write script's reply as the task's new state, DuplicateTask or TaskIdConflict. */
export const taskWriteOutcome = (w: TaskWrite, reply: BatchReply): Result.Result<TaskState, WriteError> => {
  if (!reply.ok) return Result.fail(reply.error)
  const script = scriptOf[w.target.state]
  const n = reply.value
  const { queue, id, type } = w.msg
  switch (n) {
    case 1:
      return Result.succeed(w.target.state)
    case 0:
      return Result.fail(new TaskIdConflict({ queue, id, message: `task ID conflicts with another task: a task with id "${id}" already exists in queue "${queue}"` }))
    case -1:
      return Result.fail(
        new DuplicateTask({
          queue,
          type,
          uniqueKey: w.msg.uniqueKey,
          message: `task already exists: a task of type "${type}" with the same payload is still unique-locked in queue "${queue}" (lock ${w.msg.uniqueKey})`
        })
      )
    default:
      return Result.fail(
        new RedisError({ op: `script ${script}`, message: `script ${script} replied ${describeReply(n)}, expected 1, 0 or -1; is another script loaded under its SHA?` })
      )
  }
}

const describeReply = (v: unknown): string => (Buffer.isBuffer(v) ? `${v.length} bytes` : JSON.stringify(v) ?? String(v))

const groupByQueue = (ws: ReadonlyArray<TaskWrite>): Map<string, Array<number>> => {
  const m = new Map<string, Array<number>>()
  ws.forEach((w, i) => {
    const list = m.get(w.msg.queue)
    if (list) list.push(i)
    else m.set(w.msg.queue, [i])
  })
  return m
}

const failAll = (n: number, error: RedisError): Array<BatchReply> => Array.from({ length: n }, () => ({ ok: false as const, error }))

/**
 * Writes new tasks (one script call each) and registers their queues, in as few round trips as
 * the deployment allows (see the module comment). Each task gets its own outcome; a failed round
 * trip fails only the tasks it carried. Never fails as a whole.
 */
export const writeTasks = Effect.fnUntraced(function* (ws: ReadonlyArray<TaskWrite>) {
  const { redis, knownQueues } = yield* Broker
  if (ws.length === 0) return []
  const now = yield* Clock.currentTimeMillis
  const byQueue = groupByQueue(ws)
  const toRegister = [...byQueue.keys()].filter((q) => !knownQueues.has(q, now))
  const replies: Array<BatchReply> = new Array(ws.length)
  let registered: ReadonlyArray<BatchReply>
  const batch = (calls: ReadonlyArray<ScriptCall>) =>
    redis.scriptBatch(calls).pipe(Effect.catch((e: RedisError) => Effect.succeed(failAll(calls.length, e))))

  if (!redis.isCluster) {
    const all = yield* batch([...toRegister.map(registerQueueCall), ...ws.map(taskWriteCall)])
    registered = all.slice(0, toRegister.length)
    all.slice(toRegister.length).forEach((r, i) => (replies[i] = r))
  } else {
    const groups = [...byQueue.values()]
    const [reg, perQueue] = yield* Effect.all(
      [
        Effect.forEach(toRegister, (q) => batch([registerQueueCall(q)]).pipe(Effect.map((r) => r[0]!)), { concurrency: "unbounded" }),
        Effect.forEach(groups, (idx) => batch(idx.map((i) => taskWriteCall(ws[i]!))), { concurrency: "unbounded" })
      ],
      { concurrency: 2 }
    )
    registered = reg
    groups.forEach((idx, g) => idx.forEach((i, j) => (replies[i] = perQueue[g]![j]!)))
  }

  registered.forEach((r, i) => {
    if (r.ok) knownQueues.add(toRegister[i]!, now)
  })
  const failedRegistration = registered.find((r): r is Extract<BatchReply, { ok: false }> => !r.ok)
  if (failedRegistration) {
    // The tasks themselves may be written; the next enqueue to the queue tries the SADD again.
    yield* Effect.logWarning(`could not add queue(s) to ${allQueues}: ${failedRegistration.error.message}`)
  }
  return ws.map((w, i) => taskWriteOutcome(w, replies[i]!))
})

/**
 * Writes one new task (and registers its queue if needed) in one round trip. Once the queue is
 * known to be registered that is a single script call (a plain EVALSHA, see `scriptBatch`).
 */
export const writeTask = Effect.fnUntraced(function* (w: TaskWrite) {
  const { redis, knownQueues } = yield* Broker
  if (!knownQueues.has(w.msg.queue, yield* Clock.currentTimeMillis)) {
    const [outcome] = yield* writeTasks([w])
    return yield* Effect.fromResult(outcome!)
  }
  const calls = [taskWriteCall(w)]
  const [reply] = yield* redis.scriptBatch(calls).pipe(Effect.catch((e: RedisError) => Effect.succeed(failAll(1, e))))
  return yield* Effect.fromResult(taskWriteOutcome(w, reply!))
})
