/** What the inspector returns: asynq's Inspector types, in milliseconds and Dates. */
import type { QueueCounters } from "../broker/queueInfo.js"
import type { QueueLimitInfo } from "../broker/queueLimit.js"
import type { TaskState } from "../wire/keys.js"

/** A queue's state at one moment (asynq's QueueInfo): its counters, plus what the inspector derives. */
export interface QueueInfo extends Omit<QueueCounters, "oldestPendingSince"> {
  readonly queue: string
  /** Approximate bytes the queue and its tasks take in Redis (sampled like asynq). */
  readonly memoryUsage: number
  /** Age of the oldest pending task in ms (0 when nothing is pending). */
  readonly latencyMs: number
  /** pending + active + scheduled + retry + archived + completed + aggregating. */
  readonly size: number
  /** When this snapshot was taken. */
  readonly timestamp: Date
  /** The queue's flow-control limit (not asynq's: effect-asynq workers apply it); absent when it has none. */
  readonly limit?: QueueLimitInfo
  /**
   * Not asynq's: when the queue is held (a handler returned `RateLimited` with `holdQueue`: no
   * effect-asynq worker leases its tasks before then), the end of the hold; absent when it is not held.
   */
  readonly heldUntil?: Date
}

/** Counters of one day (asynq's DailyStats). */
export interface DailyStats {
  readonly queue: string
  readonly processed: number
  readonly failed: number
  /** The day (UTC midnight). */
  readonly date: Date
}

/** One aggregation group (asynq's GroupInfo). */
export interface GroupInfo {
  readonly group: string
  readonly size: number
}

/** Paging of task listings: `page` counts from 1 (default 1), `pageSize` defaults to 30 (asynq's). */
export interface ListOptions {
  readonly page?: number
  readonly pageSize?: number
  /** Required for state "aggregating": the group to list. */
  readonly group?: string
}

/** States whose tasks can be run, archived or deleted in bulk. */
export type BulkState = Exclude<TaskState, "active">

/** How a bulk operation proceeds: at most `batchSize` tasks per Redis call (default 1000). */
export interface BulkOptions {
  readonly batchSize?: number
  /** Required for state "aggregating". */
  readonly group?: string
  /** Called after every batch. */
  readonly onProgress?: (progress: BulkProgress) => void
}

/** Progress of a bulk action: tasks done so far, of how many. */
export interface BulkProgress {
  /** Tasks handled so far. */
  readonly done: number
  /** done + what is left in the source right now (it can grow while new tasks arrive). */
  readonly total: number
  /**
   * Archive-all only: older archived tasks removed so far to keep the archive within asynq's limits
   * (90 days, 10,000 tasks), as every archiving does. Archiving more than the limit loses the oldest.
   */
  readonly trimmed?: number
}

/** A Redis Cluster node serving a queue's slot. */
export interface ClusterNode {
  readonly id: string
  readonly addr: string
}
