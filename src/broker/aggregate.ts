/** Aggregation (the `aggregate` step's scripts and reads): groups, aggregation sets. */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { type IdAndBytes, idBytesPairsReply, integerReply, integersReply } from "./decode.js"
import { utf8Text } from "./fields.js"
import { defineScript } from "./script.js"
import { unixSeconds } from "./time.js"
import {
  checkGroupsLua,
  deleteAggregationSetLua,
  readAggregationSetLua,
  reclaimStaleAggregationSetsLua
} from "../redis/lua.generated.js"

/** The groups listed in the queue's groups set; with a limit, that many distinct groups drawn at random (so successive calls see every group). */
export const listGroups = Effect.fn("Broker.listGroups")(function* (queue: string, limit?: number) {
  const { redis } = yield* Broker
  const key = queueKeys(queue).allGroups
  const names = yield* limit !== undefined
    ? redis.command("srandmember groups", ["SRANDMEMBER", key, limit])
    : redis.command("smembers groups", ["SMEMBERS", key])
  return names as ReadonlyArray<string>
})

export interface CheckGroupInput {
  readonly queue: string
  readonly group: string
  readonly setId: string
  readonly rule: {
    readonly maxSize: number
    readonly maxDelaySec: number
    readonly gracePeriodSec: number
    readonly deadlineSec: number
  }
  readonly nowMs: number
}

/** Script `checkGroups`: moves a ready group's oldest tasks into a new aggregation set; returns how many (0 = not ready). */
export const checkGroupsScript = defineScript<CheckGroupInput, number>({
  name: "checkGroups",
  source: checkGroupsLua,
  buffers: false,
  keys: ({ queue, group, setId }) => {
    const k = queueKeys(queue)
    return [k.group(group), k.aggregationSet(group, setId), k.allAggregationSets, k.allGroups]
  },
  args: ({ rule, nowMs, group }) => [
    rule.maxSize,
    rule.maxDelaySec,
    rule.gracePeriodSec,
    rule.deadlineSec,
    unixSeconds(nowMs),
    group
  ],
  decode: (reply) => integerReply("checkGroups", reply)
})

export interface AggregationSetInput {
  readonly queue: string
  readonly group: string
  readonly setId: string
}

const setKeys = ({ queue, group, setId }: AggregationSetInput) => {
  const k = queueKeys(queue)
  return [k.aggregationSet(group, setId), k.allAggregationSets, k.taskPrefix]
}

/** Script `readAggregationSet`: the set's raw messages and deadline (undefined when not registered). */
export const readAggregationSetScript = defineScript<
  AggregationSetInput,
  { readonly deadlineSec: number | undefined; readonly tasks: ReadonlyArray<IdAndBytes> }
>({
  name: "readAggregationSet",
  source: readAggregationSetLua,
  buffers: true,
  keys: setKeys,
  args: () => [],
  decode: (reply) => {
    const head: unknown = Array.isArray(reply) ? reply[0] : undefined
    const deadlineSec = head instanceof Uint8Array ? Number(utf8Text(head)) : undefined
    return Result.map(idBytesPairsReply("readAggregationSet", reply, 1), (tasks) => ({ deadlineSec, tasks }))
  }
})

/** Script `deleteAggregationSet`: deletes the set and its member tasks; returns how many tasks. */
export const deleteAggregationSetScript = defineScript<AggregationSetInput, number>({
  name: "deleteAggregationSet",
  source: deleteAggregationSetLua,
  buffers: false,
  keys: setKeys,
  args: () => [],
  decode: (reply) => integerReply("deleteAggregationSet", reply)
})

/** Script `reclaimStaleAggregationSets`: sets past their deadline go back into their groups (at most `batch`). */
export const reclaimStaleAggregationSetsScript = defineScript<
  { readonly queue: string; readonly nowMs: number; readonly batch: number },
  { readonly sets: number; readonly tasks: number }
>({
  name: "reclaimStaleAggregationSets",
  source: reclaimStaleAggregationSetsLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.allAggregationSets, k.groupPrefix, k.allGroups]
  },
  args: ({ nowMs, batch }) => [unixSeconds(nowMs), batch],
  decode: (reply) =>
    Result.map(integersReply("reclaimStaleAggregationSets", reply, 2), ([sets, tasks]) => ({
      sets: sets!,
      tasks: tasks!
    }))
})
