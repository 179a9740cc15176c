/**
 * The JSON shapes of asynqmon's API (snake_case fields, RFC 3339 times, "" for an unknown time,
 * payloads as text or "non-printable bytes"), built from the inspector's values. Fields asynqmon
 * does not have are added at the end of a shape (`headers`, `trace_id`, `payload_encoding`), never
 * renamed, so asynqmon's own UI and scripts written against it read ours. A queue's flow-control
 * limit (ours, not asynq's) is added to its snapshot only when the queue has one, and its hold
 * (`held_until`) only while it is held, so a deployment without limits answers exactly asynqmon's shape.
 */
import type { DailyStats, GroupInfo, QueueInfo } from "../../src/inspector/types.js"
import type { QueueLimitInfo, StoredRate } from "../../src/steps/queueLimit.js"
import type {
  EnqueueEventDetails,
  SchedulerEntryDetails,
  ServerDetails,
  WorkerDetails
} from "../../src/inspector/serverTypes.js"
import type { TaskInfo } from "../../src/steps/taskInfo.js"

/** RFC 3339 in UTC without fractions (Go's time.RFC3339 of a UTC time); "" for no time. */
export const rfc3339 = (d: Date | undefined): string =>
  d === undefined || Number.isNaN(d.getTime()) ? "" : d.toISOString().replace(/\.\d{3}Z$/, "Z")

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** asynqmon's payload text: the bytes as UTF-8 when all printable, else "non-printable bytes" ("" for none). */
export const printable = (bytes: Uint8Array | undefined): string => {
  if (bytes === undefined || bytes.length === 0) return ""
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return "non-printable bytes"
  }
  // Go's unicode.IsPrint: no control or format characters (spaces are fine, but not only spaces).
  if (/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/u.test(text.replace(/[\t\n\r ]/g, ""))) return "non-printable bytes"
  if (/^\s+$/.test(text)) return "non-printable bytes"
  return text
}

/** Go's time.Duration String() of a millisecond count, as asynqmon's display_latency shows it. */
export const goDuration = (ms: number): string => {
  if (ms <= 0) return "0s"
  const totalSec = ms / 1000
  if (totalSec < 1) return `${ms}ms`
  const h = Math.floor(totalSec / 3600)
  const m = Math.floor((totalSec % 3600) / 60)
  const s = totalSec - h * 3600 - m * 60
  const sText = `${Number.isInteger(s) ? s : Number(s.toFixed(3))}s`
  if (h > 0) return `${h}h${m}m${sText}`
  if (m > 0) return `${m}m${sText}`
  return sText
}

const rateJson = (rate: StoredRate) => ({
  limit: rate.limit,
  per_ms: rate.perMs,
  interval_ms: rate.intervalMs,
  burst: rate.burst
})

/**
 * A queue's flow-control limit as the dashboard's API shows it (snake_case, as the rest):
 * `{ rate?: { limit, per_ms, interval_ms, burst }, concurrency?, per_key?: { rate?, concurrency? } }`.
 */
export const limitJson = (limit: QueueLimitInfo) => ({
  ...(limit.rate ? { rate: rateJson(limit.rate) } : {}),
  ...(limit.concurrency !== undefined ? { concurrency: limit.concurrency } : {}),
  ...(limit.perKey
    ? {
        per_key: {
          ...(limit.perKey.rate ? { rate: rateJson(limit.perKey.rate) } : {}),
          ...(limit.perKey.concurrency !== undefined ? { concurrency: limit.perKey.concurrency } : {})
        }
      }
    : {})
})

export const queueSnapshot = (q: QueueInfo) => ({
  queue: q.queue,
  memory_usage_bytes: q.memoryUsage,
  size: q.size,
  groups: q.groups,
  latency_msec: q.latencyMs,
  display_latency: goDuration(q.latencyMs),
  active: q.active,
  pending: q.pending,
  aggregating: q.aggregating,
  scheduled: q.scheduled,
  retry: q.retry,
  archived: q.archived,
  completed: q.completed,
  processed: q.processed,
  succeeded: q.processed - q.failed,
  failed: q.failed,
  processed_total: q.processedTotal,
  failed_total: q.failedTotal,
  paused: q.paused,
  timestamp: q.timestamp.toISOString(),
  ...(q.limit ? { limit: limitJson(q.limit) } : {}),
  ...(q.heldUntil ? { held_until: q.heldUntil.toISOString() } : {})
})

export const dailyStats = (d: DailyStats) => ({
  queue: d.queue,
  processed: d.processed,
  succeeded: d.processed - d.failed,
  failed: d.failed,
  date: d.date.toISOString().slice(0, 10)
})

/** The W3C trace id of a task's `traceparent` header ("" when it has none or it is malformed). */
export const traceIdOf = (headers: Readonly<Record<string, string>>): string => {
  const m = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(
    (headers["traceparent"] ?? "").trim().toLowerCase()
  )
  return m !== null && m[1] !== "0".repeat(32) ? m[1]! : ""
}

const base64 = (b: Uint8Array | undefined) =>
  b === undefined ? "" : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64")

/** One task as asynqmon's task detail (GET /api/queues/{q}/tasks/{id}) shows it, plus headers and trace id. */
export const taskJson = (t: TaskInfo, nowMs: number, worker?: WorkerDetails) => ({
  id: t.id,
  queue: t.queue,
  type: t.type,
  payload: printable(t.payload),
  state: t.state,
  max_retry: t.maxRetry,
  retried: t.retried,
  error_message: t.lastErr,
  last_failed_at: rfc3339(t.lastFailedAt),
  timeout_seconds: Math.floor(t.timeoutMs / 1000),
  deadline: rfc3339(t.deadline),
  next_process_at: rfc3339(t.nextProcessAt),
  completed_at: rfc3339(t.completedAt),
  result: printable(t.result),
  ttl_seconds:
    t.completedAt === undefined || t.retentionMs === 0
      ? 0
      : Math.max(0, Math.floor((t.completedAt.getTime() + t.retentionMs - nowMs) / 1000)),
  is_orphaned: t.isOrphaned,
  group: t.group,
  start_time: t.state === "active" ? (worker ? rfc3339(worker.started) : "-") : "",
  headers: t.headers,
  trace_id: traceIdOf(t.headers),
  payload_base64: base64(t.payload),
  result_base64: base64(t.result)
})

export const groupJson = (g: GroupInfo) => ({ group: g.group, size: g.size })

export const workerJson = (w: WorkerDetails) => ({
  task_id: w.taskId,
  queue: w.queue,
  task_type: w.taskType,
  task_payload: printable(w.taskPayload),
  start_time: rfc3339(w.started),
  deadline: rfc3339(w.deadline)
})

export const serverJson = (s: ServerDetails) => ({
  id: s.serverId,
  host: s.host,
  pid: s.pid,
  concurrency: s.concurrency,
  queue_priorities: s.queues,
  strict_priority_enabled: s.strictPriority,
  start_time: rfc3339(s.started),
  status: s.status,
  active_workers: s.activeWorkers.map(workerJson)
})

export const schedulerEntryJson = (e: SchedulerEntryDetails) => ({
  id: e.id,
  spec: e.spec,
  task_type: e.taskType,
  task_payload: printable(e.taskPayload),
  options: [...e.options],
  next_enqueue_at: rfc3339(e.next),
  ...(e.prev !== undefined ? { prev_enqueue_at: rfc3339(e.prev) } : {})
})

export const enqueueEventJson = (e: EnqueueEventDetails) => ({ task_id: e.taskId, enqueued_at: rfc3339(e.enqueuedAt) })
