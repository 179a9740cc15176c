/**
 * TaskInfo: what a caller learns about a task (asynq's TaskInfo), in milliseconds and Dates.
 * Zero-valued asynq times (0 unix seconds) become `undefined`.
 */
import type { TaskMessage } from "../wire/TaskMessage.js"
import type { TaskState } from "../wire/keys.js"

/** A task as the client and the inspector report it: id, queue, type, payload, state, options, retries, errors and times. */
export interface TaskInfo {
  readonly id: string
  readonly queue: string
  readonly type: string
  /** `undefined` when the task has no payload. */
  readonly payload: Uint8Array | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly state: TaskState
  /** How many times the task may be retried. */
  readonly maxRetry: number
  /** How many times it has been retried so far. */
  readonly retried: number
  /** The last failure's error message ("" when it never failed). */
  readonly lastErr: string
  readonly lastFailedAt: Date | undefined
  /** How long one attempt may run, in ms (0: no timeout, only the deadline if any). */
  readonly timeoutMs: number
  readonly deadline: Date | undefined
  /** The aggregation group ("" when none). */
  readonly group: string
  /** When the task is due: now for pending, the process-at time for scheduled/retry; undefined when not known (aggregating…). */
  readonly nextProcessAt: Date | undefined
  /** An active task whose worker stopped extending its lease. */
  readonly isOrphaned: boolean
  /** How long a completed task is kept, in ms (0: deleted on completion). */
  readonly retentionMs: number
  readonly completedAt: Date | undefined
  /** The result the handler wrote, if any. */
  readonly result: Uint8Array | undefined
}

/** What the message does not say about a task. */
export interface TaskInfoExtra {
  readonly nextProcessAt?: Date | undefined
  readonly isOrphaned?: boolean
  readonly result?: Uint8Array | undefined
}

const unixDate = (seconds: number): Date | undefined => (seconds > 0 ? new Date(seconds * 1000) : undefined)

export const taskInfoFromMessage = (msg: TaskMessage, state: TaskState, extra: TaskInfoExtra = {}): TaskInfo => ({
  id: msg.id,
  queue: msg.queue,
  type: msg.type,
  payload: msg.payload,
  headers: msg.headers,
  state,
  maxRetry: msg.retry,
  retried: msg.retried,
  lastErr: msg.errorMsg,
  lastFailedAt: unixDate(msg.lastFailedAt),
  timeoutMs: msg.timeout * 1000,
  deadline: unixDate(msg.deadline),
  group: msg.groupKey,
  nextProcessAt: extra.nextProcessAt,
  isOrphaned: extra.isOrphaned ?? false,
  retentionMs: msg.retention * 1000,
  completedAt: unixDate(msg.completedAt),
  result: extra.result
})
