import * as Data from "effect/Data"

/** A task with the same uniqueness key (queue + type + payload) is still locked. */
export class DuplicateTask extends Data.TaggedError("DuplicateTask")<{
  readonly queue: string
  readonly type: string
  readonly uniqueKey: string
  readonly message: string
}> {}

/** A task with this id already exists in the queue. */
export class TaskIdConflict extends Data.TaggedError("TaskIdConflict")<{
  readonly queue: string
  readonly id: string
  readonly message: string
}> {}

/** No task with this id in this queue. */
export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{
  readonly queue: string
  readonly id: string
  readonly message: string
}> {}

/** The queue does not exist (it is not in `asynq:queues`). */
export class QueueNotFound extends Data.TaggedError("QueueNotFound")<{
  readonly queue: string
  readonly message: string
}> {}

/** An option or argument was rejected before anything was written. */
export class InvalidArgument extends Data.TaggedError("InvalidArgument")<{
  /** The option or argument at fault, e.g. `queue`, `maxRetry`. */
  readonly field: string
  readonly message: string
}> {}

/** The operation does not fit the task's or queue's current state (e.g. pausing a paused queue). */
export class InvalidState extends Data.TaggedError("InvalidState")<{
  readonly message: string
}> {}

/** The task lost its lease (a recoverer took it back, or it was deleted) while we held it. */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{
  readonly queue: string
  readonly id: string
  readonly message: string
}> {}

/** deleteQueue without `force` on a queue that still holds tasks. */
export class QueueNotEmpty extends Data.TaggedError("QueueNotEmpty")<{
  readonly queue: string
  /** How many tasks the queue holds (all states). */
  readonly size: number
  readonly message: string
}> {}

/** clusterNodes on a Redis that is not a Redis Cluster. */
export class NotACluster extends Data.TaggedError("NotACluster")<{
  readonly target: string
  readonly message: string
}> {}

/** No execution with this id of this workflow (never started, or deleted once its retention passed). */
export class ExecutionNotFound extends Data.TaggedError("ExecutionNotFound")<{
  readonly workflow: string
  readonly executionId: string
  readonly message: string
}> {}
