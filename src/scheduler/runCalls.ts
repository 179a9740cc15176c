/**
 * Sends many script calls with as few round trips as the deployment allows: one pipeline on a
 * single node (or Sentinel); on a Redis Cluster one pipeline per hash slot tag, all at once. Calls
 * of one slot keep their order. Each call gets its own reply; nothing fails as a whole.
 */
import { Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import type { RedisError } from "../redis/errors.js"
import type { BatchReply, ScriptCall } from "../redis/Redis.js"

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
const slotTag = (key: string): string => {
  const open = key.indexOf("{")
  if (open >= 0) {
    const close = key.indexOf("}", open + 1)
    if (close > open + 1) return key.slice(open + 1, close)
  }
  return key
}

export const runCalls = Effect.fn("Scheduler.runCalls")(function* (calls: ReadonlyArray<ScriptCall>, opts?: { readonly buffers?: boolean }) {
  const { redis } = yield* Broker
  if (calls.length === 0) return [] as ReadonlyArray<BatchReply>
  const batch = (cs: ReadonlyArray<ScriptCall>) =>
    redis.scriptBatch(cs, opts).pipe(Effect.catch((error: RedisError) => Effect.succeed(cs.map((): BatchReply => ({ ok: false, error })))))
  if (!redis.isCluster) return yield* batch(calls)
  const groups = new Map<string, Array<number>>()
  calls.forEach((c, i) => {
    const tag = slotTag(c.keys[0] ?? "")
    const g = groups.get(tag)
    if (g) g.push(i)
    else groups.set(tag, [i])
  })
  const replies: Array<BatchReply> = new Array(calls.length)
  yield* Effect.forEach(
    [...groups.values()],
    (idx) => Effect.map(batch(idx.map((i) => calls[i]!)), (rs) => rs.forEach((r, j) => (replies[idx[j]!] = r))),
    { concurrency: "unbounded", discard: true }
  )
  return replies as ReadonlyArray<BatchReply>
})
