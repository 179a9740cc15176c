/** Servers, workers and scheduler entries as the inspector returns them (asynq's types, with Dates). */

/** A worker slot busy with one task (asynq's WorkerInfo). */
export interface WorkerDetails {
  readonly taskId: string
  readonly taskType: string
  readonly taskPayload: Uint8Array | undefined
  readonly queue: string
  readonly started: Date
  /** When the handler's context expires. */
  readonly deadline: Date
}

/** A running server (asynq's ServerInfo) with the tasks it is processing. */
export interface ServerDetails {
  /** `host:pid:serverId`, as in the Redis key. */
  readonly id: string
  readonly host: string
  readonly pid: number
  readonly serverId: string
  readonly concurrency: number
  /** Queue name → priority weight. */
  readonly queues: Readonly<Record<string, number>>
  readonly strictPriority: boolean
  readonly status: string
  readonly started: Date
  readonly activeWorkers: ReadonlyArray<WorkerDetails>
}

/** A periodic task registered by a running scheduler (asynq's SchedulerEntry). */
export interface SchedulerEntryDetails {
  readonly id: string
  readonly spec: string
  readonly taskType: string
  readonly taskPayload: Uint8Array | undefined
  /** Enqueue options in Go's `Option.String()` form, e.g. `Queue("low")`. */
  readonly options: ReadonlyArray<string>
  readonly next: Date
  /** undefined when the entry has not enqueued anything yet. */
  readonly prev: Date | undefined
}

/** One enqueue done by a scheduler entry (asynq's SchedulerEnqueueEvent). */
export interface EnqueueEventDetails {
  readonly taskId: string
  readonly enqueuedAt: Date
}
