import type { TaskInfo } from "../../src/steps/taskInfo.js"

/** TaskInfo as JSON: dates as ISO strings (or null), byte fields as base64 (or null). */
export interface TaskInfoJson {
  readonly id: string
  readonly queue: string
  readonly type: string
  readonly state: string
  readonly payloadBase64: string | null
  readonly headers: Readonly<Record<string, string>>
  readonly maxRetry: number
  readonly retried: number
  readonly lastErr: string
  readonly lastFailedAt: string | null
  readonly timeoutMs: number
  readonly deadline: string | null
  readonly group: string
  readonly nextProcessAt: string | null
  readonly isOrphaned: boolean
  readonly retentionMs: number
  readonly completedAt: string | null
  readonly resultBase64: string | null
}

const iso = (d: Date | undefined) => (d === undefined ? null : d.toISOString())
const b64 = (b: Uint8Array | undefined) =>
  b === undefined ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64")

export const taskInfoToJson = (t: TaskInfo): TaskInfoJson => ({
  id: t.id,
  queue: t.queue,
  type: t.type,
  state: t.state,
  payloadBase64: b64(t.payload),
  headers: t.headers,
  maxRetry: t.maxRetry,
  retried: t.retried,
  lastErr: t.lastErr,
  lastFailedAt: iso(t.lastFailedAt),
  timeoutMs: t.timeoutMs,
  deadline: iso(t.deadline),
  group: t.group,
  nextProcessAt: iso(t.nextProcessAt),
  isOrphaned: t.isOrphaned,
  retentionMs: t.retentionMs,
  completedAt: iso(t.completedAt),
  resultBase64: b64(t.result)
})
