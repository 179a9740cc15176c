import { Effect, Result } from "effect"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"
import { encodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import type { LeaseLost } from "./errors.js"
import { leaseLost, ownUniqueKey } from "./leaseLost.js"
import { asInteger } from "./replies.js"
import { statsExpireAt, unixSeconds } from "./time.js"

export type CompleteOutcome = "deleted" | "completed"

/** The `complete` script call for one task finished at `nowMs`. */
export const completeCall = (msg: TaskMessage, nowMs: number): ScriptCall => {
  const k = queueKeys(msg.queue)
  const nowSec = unixSeconds(nowMs)
  const args =
    msg.retention > 0
      ? [msg.id, statsExpireAt(nowMs), "keep", nowSec + msg.retention, bytesArg(encodeTaskMessage({ ...msg, completedAt: nowSec }))]
      : [msg.id, statsExpireAt(nowMs), "delete", 0, ""]
  const keys = [k.active, k.lease, k.completed, k.taskPrefix, k.processed(nowMs), k.processedTotal, ...ownUniqueKey(k.prefix, msg.uniqueKey)]
  return { script: "complete", keys, args }
}

const outcomeOf = (msg: TaskMessage, reply: unknown): Effect.Effect<CompleteOutcome, LeaseLost | RedisError> =>
  Effect.flatMap(asInteger("complete", reply), (n) =>
    n !== 1 ? Effect.fail(leaseLost(msg.queue, msg.id, "complete")) : Effect.succeed(msg.retention > 0 ? "completed" : "deleted")
  )

/**
 * Script `complete`: active -> deleted, or -> completed when `msg.retention` > 0 (the message is
 * stored with `completedAt` = now). Fails with LeaseLost when the task is no longer active.
 */
export const completeActive = Effect.fnUntraced(function* (msg: TaskMessage, nowMs: number) {
  const { redis } = yield* Broker
  const call = completeCall(msg, nowMs)
  return yield* outcomeOf(msg, yield* redis.script("complete", call.keys, call.args))
})

/**
 * Script `complete` for several tasks in one round trip (one pipelined call per task; on a
 * cluster, one pipeline per queue, since a pipeline's keys must share a slot). Each task gets its
 * own outcome: done, LeaseLost, or the RedisError of its call or of its pipeline. `extra` calls
 * (of other steps) ride along in the same round trip (on a cluster, in a pipeline of their own),
 * read with buffers; their replies come back in order.
 */
export const completeActiveMany = Effect.fnUntraced(function* (msgs: ReadonlyArray<TaskMessage>, nowMs: number, extra: ReadonlyArray<ScriptCall> = []) {
  const { redis } = yield* Broker
  const groups: Array<ReadonlyArray<number>> = []
  if (redis.isCluster) {
    const byQueue = new Map<string, Array<number>>()
    msgs.forEach((m, i) => {
      const g = byQueue.get(m.queue)
      if (g) g.push(i)
      else byQueue.set(m.queue, [i])
    })
    groups.push(...byQueue.values())
  } else {
    groups.push(msgs.map((_, i) => i))
  }
  const results: Array<Result.Result<CompleteOutcome, LeaseLost | RedisError>> = new Array(msgs.length)
  let extraReplies: ReadonlyArray<BatchReply> = []
  const failAll = (n: number, error: RedisError): ReadonlyArray<BatchReply> => Array.from({ length: n }, (): BatchReply => ({ ok: false, error }))
  const sendGroup = (idx: ReadonlyArray<number>, withExtra: ReadonlyArray<ScriptCall>) => {
    const calls = idx.map((i) => completeCall(msgs[i]!, nowMs)).concat(withExtra)
    return redis.scriptBatch(calls, { buffers: withExtra.length > 0 }).pipe(
      Effect.catch((e: RedisError) => Effect.succeed(failAll(calls.length, e))),
      Effect.flatMap((replies) => {
        if (withExtra.length > 0) extraReplies = replies.slice(idx.length)
        return Effect.forEach(
          idx,
          (i, j) => {
            const r = replies[j]!
            return (r.ok ? outcomeOf(msgs[i]!, r.value) : Effect.fail(r.error)).pipe(
              Effect.result,
              Effect.map((res) => void (results[i] = res))
            )
          },
          { discard: true }
        )
      })
    )
  }
  const sends = groups.map((idx, g) => sendGroup(idx, !redis.isCluster && g === 0 ? extra : []))
  if (redis.isCluster && extra.length > 0) sends.push(sendGroup([], extra))
  yield* Effect.all(sends, { concurrency: "unbounded", discard: true })
  return { results, extra: extraReplies } as {
    readonly results: ReadonlyArray<Result.Result<CompleteOutcome, LeaseLost | RedisError>>
    readonly extra: ReadonlyArray<BatchReply>
  }
})
