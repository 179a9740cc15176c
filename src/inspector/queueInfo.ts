import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { memoryUsageScript, queueStatsScript } from "../broker/queueInfo.js"
import { queueFlowScript } from "../broker/queueLimit.js"
import { bindScript, runScripts } from "../broker/script.js"
import { requireQueue } from "../broker/queues.js"
import type { QueueInfo } from "./types.js"

/** asynq samples 20 tasks per list/zset and the first 5 groups. */
const taskSampleSize = 20
const groupSampleSize = 5

/** Current information about one queue (asynq's GetQueueInfo). QueueNotFound when it does not exist. */
export const getQueueInfo = Effect.fn("Inspector.getQueueInfo")(function* (queue: string) {
  yield* requireQueue(queue)
  const now = yield* Clock.currentTimeMillis
  const [stats, memory, flow] = yield* runScripts([
    bindScript(queueStatsScript, { queue, nowMs: now }),
    bindScript(memoryUsageScript, { queue, taskSample: taskSampleSize, groupSample: groupSampleSize }),
    bindScript(queueFlowScript, { queue })
  ])
  const {
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
    aggregating,
    oldestPendingSince: oldest
  } = yield* Effect.fromResult(stats)
  const memoryUsage = yield* Effect.fromResult(memory)
  const { limit, holdUntilMs } = yield* Effect.fromResult(flow)
  let latencyMs = 0
  if (/^\d+$/.test(oldest) && oldest !== "0") latencyMs = Math.max(0, now - Number(BigInt(oldest) / 1_000_000n))
  const info: QueueInfo = {
    queue,
    memoryUsage,
    latencyMs,
    size: pending + active + scheduled + retry + archived + completed + aggregating,
    groups: groups,
    pending: pending,
    active: active,
    scheduled: scheduled,
    retry: retry,
    archived: archived,
    completed: completed,
    aggregating: aggregating,
    processed: processed,
    failed: failed,
    processedTotal: processedTotal,
    failedTotal: failedTotal,
    paused,
    timestamp: new Date(now),
    ...(limit ? { limit } : {}),
    ...(holdUntilMs !== undefined && holdUntilMs > now ? { heldUntil: new Date(holdUntilMs) } : {})
  }
  return info
})
