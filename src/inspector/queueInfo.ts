import { Clock, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { queueKeys } from "../wire/keys.js"
import { requireQueue } from "./requireQueue.js"
import { asArray, num, text, unexpectedReply } from "./replies.js"
import type { QueueInfo } from "./types.js"

/** asynq samples 20 tasks per list/zset and the first 5 groups. */
const taskSampleSize = 20
const groupSampleSize = 5

/** Current information about one queue (asynq's GetQueueInfo). QueueNotFound when it does not exist. */
export const getQueueInfo = Effect.fn("Inspector.getQueueInfo")(function* (queue: string) {
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const reply = yield* asArray(
    "inspector_queueStats",
    yield* redis.script(
      "inspector_queueStats",
      [k.pending, k.active, k.scheduled, k.retry, k.archived, k.completed, k.processed(now), k.failed(now), k.processedTotal, k.failedTotal, k.paused, k.allGroups, k.taskPrefix, k.groupPrefix],
      []
    )
  )
  const n = reply.slice(0, 13).map(num)
  if (reply.length !== 14 || n.some((x) => x === undefined)) return yield* unexpectedReply("inspector_queueStats", "14 counters")
  const [pending, active, scheduled, retry, archived, completed, processed, failed, processedTotal, failedTotal, paused, groups, aggregating] = n as Array<number>
  const memory = yield* redis.script(
    "inspector_memoryUsage",
    [k.active, k.pending, k.scheduled, k.retry, k.archived, k.completed, k.allGroups, k.taskPrefix, k.groupPrefix],
    [taskSampleSize, groupSampleSize]
  )
  const oldest = text(reply[13]) ?? ""
  let latencyMs = 0
  if (/^\d+$/.test(oldest) && oldest !== "0") latencyMs = Math.max(0, now - Number(BigInt(oldest) / 1_000_000n))
  const info: QueueInfo = {
    queue,
    memoryUsage: typeof memory === "number" ? memory : 0,
    latencyMs,
    size: pending! + active! + scheduled! + retry! + archived! + completed! + aggregating!,
    groups: groups!,
    pending: pending!,
    active: active!,
    scheduled: scheduled!,
    retry: retry!,
    archived: archived!,
    completed: completed!,
    aggregating: aggregating!,
    processed: processed!,
    failed: failed!,
    processedTotal: processedTotal!,
    failedTotal: failedTotal!,
    paused: paused === 1,
    timestamp: new Date(now)
  }
  return info
})
