/** What an Effect handler can read about the task it runs (asynq's GetTaskID, GetRetryCount, …) and its result writer. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { TaskNotFound } from "../broker/errors.js"
import type { RedisError } from "../redis/errors.js"
import type { Task } from "./Task.js"
import type { PayloadEncodeError } from "../wire/payload.js"

/** What an Effect handler can ask about the task it runs (the `TaskContext` service). */
export interface TaskContextShape {
  readonly task: Task
  readonly taskId: string
  readonly retryCount: number
  readonly maxRetry: number
  readonly queue: string
  readonly deadline: Date
  /** Aborted when the attempt is stopped (timeout, deadline, cancel, lost lease, shutdown). */
  readonly signal: AbortSignal
  /** Stores the task's result (bytes, string or JSON value); the number of bytes written. */
  readonly writeResult: (data: unknown) => Effect.Effect<number, RedisError | TaskNotFound | PayloadEncodeError>
}

/** The running task's context, a service inside Effect handlers: id, retry count, max retry, queue and result writer. */
export class TaskContext extends Context.Service<TaskContext, TaskContextShape>()("effect-asynq/TaskContext") {}

/** The running task's id, retry count, max retry and queue, as Effects. */
export const taskId = Effect.map(TaskContext, (c) => c.taskId)
/** How many times the running task was retried before this attempt. */
export const retryCount = Effect.map(TaskContext, (c) => c.retryCount)
/** How many retries the running task is allowed. */
export const maxRetry = Effect.map(TaskContext, (c) => c.maxRetry)
/** The queue of the running task. */
export const queueName = Effect.map(TaskContext, (c) => c.queue)
