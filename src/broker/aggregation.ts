import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asIdBytesPairs, asInteger, asIntegers, asStrings } from "./replies.js"
import { unixSeconds } from "./time.js"

/** The groups listed in the queue's groups set. */
export const listGroups = Effect.fn("Broker.listGroups")(function* (queue: string, limit?: number) {
  const { redis } = yield* Broker
  const key = queueKeys(queue).allGroups
  // With a limit: that many distinct groups drawn at random, so over successive calls every group is seen.
  if (limit !== undefined) return yield* asStrings("srandmember groups", yield* redis.use("srandmember groups", (c) => c.srandmember(key, limit)))
  return yield* asStrings("smembers groups", yield* redis.use("smembers groups", (c) => c.smembers(key)))
})

export interface GroupCheck {
  readonly group: string
  readonly setId: string
}

/**
 * Script `aggregationCheck`, one call per group in one round trip: returns, per group, the number
 * of tasks moved into a new aggregation set (0 = not ready).
 */
export const checkGroupsAggregation = Effect.fn("Broker.aggregationCheck")(function* (
  queue: string,
  checks: ReadonlyArray<GroupCheck>,
  rule: { readonly maxSize: number; readonly maxDelaySec: number; readonly gracePeriodSec: number; readonly deadlineSec: number },
  nowMs: number
) {
  if (checks.length === 0) return [] as ReadonlyArray<number>
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const replies = yield* redis.scriptBatch(
    checks.map((c) => ({
      script: "aggregationCheck" as const,
      keys: [k.group(c.group), k.aggregationSet(c.group, c.setId), k.allAggregationSets, k.allGroups],
      args: [rule.maxSize, rule.maxDelaySec, rule.gracePeriodSec, rule.deadlineSec, unixSeconds(nowMs), c.group]
    }))
  )
  const out: Array<number> = []
  for (const r of replies) {
    if (!r.ok) return yield* Effect.fail(r.error)
    out.push(yield* asInteger("aggregationCheck", r.value))
  }
  return out as ReadonlyArray<number>
})

/** Script `readAggregationSet`: the set's raw messages and deadline (undefined when not registered). */
export const readAggregationSetRaw = Effect.fn("Broker.readAggregationSet")(function* (queue: string, group: string, setId: string) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* redis.scriptBuffer("readAggregationSet", [k.aggregationSet(group, setId), k.allAggregationSets, k.taskPrefix], [])
  const head: unknown = Array.isArray(reply) ? reply[0] : undefined
  const deadlineSec = Buffer.isBuffer(head) ? Number(head.toString()) : undefined
  return { deadlineSec, tasks: yield* asIdBytesPairs("readAggregationSet", reply, 1) }
})

/** Script `deleteAggregationSet`: deletes the set and its member tasks; returns how many tasks. */
export const deleteAggregationSetTasks = Effect.fn("Broker.deleteAggregationSet")(function* (queue: string, group: string, setId: string) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  return yield* asInteger("deleteAggregationSet", yield* redis.script("deleteAggregationSet", [k.aggregationSet(group, setId), k.allAggregationSets, k.taskPrefix], []))
})

/** Script `reclaimStaleAggregationSets`: sets past their deadline go back into their groups. */
export const reclaimStaleSets = Effect.fn("Broker.reclaimStaleAggregationSets")(function* (queue: string, nowMs: number, batch: number) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* redis.script("reclaimStaleAggregationSets", [k.allAggregationSets, k.groupPrefix, k.allGroups], [unixSeconds(nowMs), batch])
  const [sets, tasks] = yield* asIntegers("reclaimStaleAggregationSets", reply, 2)
  return { sets: sets!, tasks: tasks! }
})
