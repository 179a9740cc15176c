/** The inspector's queue statistics: counters, memory estimate, groups, daily history. */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { arrayReply, unexpectedReply } from "./decode.js"
import { numField, textField } from "./fields.js"
import { defineScript } from "./script.js"
import { inspector_groupStatsLua, inspector_memoryUsageLua, inspector_queueStatsLua } from "../redis/lua.generated.js"

/** A queue's counters, as one script call reads them. */
export interface QueueCounters {
  readonly pending: number
  readonly active: number
  readonly scheduled: number
  readonly retry: number
  readonly archived: number
  readonly completed: number
  /** Tasks processed today (UTC), succeeded and failed. */
  readonly processed: number
  /** Tasks failed today (UTC). */
  readonly failed: number
  readonly processedTotal: number
  readonly failedTotal: number
  readonly paused: boolean
  /** Number of groups with aggregating tasks. */
  readonly groups: number
  readonly aggregating: number
  /** The oldest pending task's pending_since, unix ns as a string ("" when none). */
  readonly oldestPendingSince: string
}

/** Script `inspector_queueStats`: a queue's counters (today's processed/failed for `nowMs`). */
export const queueStatsScript = defineScript<{ readonly queue: string; readonly nowMs: number }, QueueCounters>({
  name: "inspector_queueStats",
  source: inspector_queueStatsLua,
  buffers: false,
  keys: ({ queue, nowMs }) => {
    const k = queueKeys(queue)
    return [
      k.pending,
      k.active,
      k.scheduled,
      k.retry,
      k.archived,
      k.completed,
      k.processed(nowMs),
      k.failed(nowMs),
      k.processedTotal,
      k.failedTotal,
      k.paused,
      k.allGroups,
      k.taskPrefix,
      k.groupPrefix
    ]
  },
  args: () => [],
  decode: (raw) =>
    Result.flatMap(arrayReply("inspector_queueStats", raw), (reply) => {
      const n = reply.slice(0, 13).map(numField)
      if (reply.length !== 14 || n.some((x) => x === undefined))
        return Result.fail(unexpectedReply("inspector_queueStats", raw, "14 counters"))
      const [
        pending,
        active,
        scheduled,
        retry,
        archived,
        completed,
        processed,
        failed,
        processedTotal,
        failedTotal,
        paused,
        groups,
        aggregating
      ] = n as Array<number>
      return Result.succeed({
        pending: pending!,
        active: active!,
        scheduled: scheduled!,
        retry: retry!,
        archived: archived!,
        completed: completed!,
        processed: processed!,
        failed: failed!,
        processedTotal: processedTotal!,
        failedTotal: failedTotal!,
        paused: paused === 1,
        groups: groups!,
        aggregating: aggregating!,
        oldestPendingSince: textField(reply[13]) ?? ""
      })
    })
})

/** Script `inspector_memoryUsage`: asynq's estimate of a queue's memory (sampling `taskSample` tasks per list/zset and the first `groupSample` groups); 0 when unknown. */
export const memoryUsageScript = defineScript<
  { readonly queue: string; readonly taskSample: number; readonly groupSample: number },
  number
>({
  name: "inspector_memoryUsage",
  source: inspector_memoryUsageLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [
      k.active,
      k.pending,
      k.scheduled,
      k.retry,
      k.archived,
      k.completed,
      k.allGroups,
      k.taskPrefix,
      k.groupPrefix
    ]
  },
  args: ({ taskSample, groupSample }) => [taskSample, groupSample],
  decode: (reply) => Result.succeed(typeof reply === "number" ? reply : 0)
})

/** Script `inspector_groupStats`: every group of a queue with its size (unsorted). */
export const groupStatsScript = defineScript<
  { readonly queue: string },
  ReadonlyArray<{ readonly group: string; readonly size: number }>
>({
  name: "inspector_groupStats",
  source: inspector_groupStatsLua,
  buffers: false,
  keys: ({ queue }) => {
    const k = queueKeys(queue)
    return [k.allGroups, k.groupPrefix]
  },
  args: () => [],
  decode: (raw) =>
    Result.map(arrayReply("inspector_groupStats", raw), (reply) => {
      const out: Array<{ group: string; size: number }> = []
      for (let i = 0; i + 1 < reply.length; i += 2)
        out.push({ group: textField(reply[i]) ?? "", size: numField(reply[i + 1]) ?? 0 })
      return out
    })
})

/** The processed/failed daily counters of a queue for each of the given times (0 when absent). */
export const readDailyStats = Effect.fn("Broker.readDailyStats")(function* (
  queue: string,
  times: ReadonlyArray<number>
) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const keys = times.flatMap((t) => [k.processed(t), k.failed(t)])
  const values = yield* redis.use("mget daily stats", (c) => c.mget(...keys))
  const count = (v: string | null | undefined) => (v ? Number(v) || 0 : 0)
  return times.map((_, i) => ({ processed: count(values[2 * i]), failed: count(values[2 * i + 1]) }))
})
