/**
 * Promise facade of the inspector for code that does not use Effect. Failures reject with the
 * tagged error itself (`e._tag === "QueueNotFound"`, `e.message`).
 */
import type { Effect } from "effect"
import type { Broker } from "../broker/Broker.js"
import type { RedisOptions } from "../redis/options.js"
import { makeBrokerRuntime, RuntimeClosed } from "../runtime/promiseRuntime.js"
import type { TaskInfo } from "../steps/taskInfo.js"
import type { TaskState } from "../wire/keys.js"
import { archiveAll, deleteAll, runAll } from "./bulkActions.js"
import { clusterKeySlot, clusterNodes } from "./cluster.js"
import { cancelProcessing, clearQueueLimit, pauseQueue, setQueueLimit, unpauseQueue } from "./control.js"
import type { QueueLimit, QueueLimitInfo } from "../steps/queueLimit.js"
import { deleteQueue, type DeleteQueueOptions } from "./deleteQueue.js"
import { getTaskInfo } from "./getTaskInfo.js"
import { groups } from "./groups.js"
import { history } from "./history.js"
import { listTasks } from "./listTasks.js"
import { getQueueInfo } from "./queueInfo.js"
import { queues } from "./queues.js"
import { redisInfo, type RedisNodeInfo } from "./redisInfo.js"
import { schedulerEntries, schedulerHistory } from "./scheduler.js"
import type { EnqueueEventDetails, SchedulerEntryDetails, ServerDetails } from "./serverTypes.js"
import { servers } from "./servers.js"
import { archiveTask, deleteTask, runTask, type TaskActionResult } from "./taskActions.js"
import { getWorkflowExecution } from "./getWorkflowExecution.js"
import { type ExecutionsPage, type ListExecutionsOptions, listWorkflowExecutions } from "./listWorkflowExecutions.js"
import {
  cancelWorkflowExecution,
  resumeWorkflowExecution,
  type WorkflowActionOptions,
  type WorkflowActionResult
} from "./workflowActions.js"
import {
  listWorkflows,
  type WorkflowExecutionInfo,
  type WorkflowInspectOptions,
  type WorkflowSummary
} from "./workflowTypes.js"
import type { BulkOptions, ClusterNode, DailyStats, GroupInfo, ListOptions, QueueInfo } from "./types.js"

/** Where the Promise inspector connects: Redis connection options (default `REDIS_URL`, then `redis://127.0.0.1:6379`). */
export type InspectorOptions = RedisOptions

/** The inspector as Promises (`createInspector`): each call is the Effect operation of the same name, rejecting with its tagged error. */
export interface Inspector {
  /** The queue names in `asynq:queues`, sorted. */
  readonly queues: () => Promise<ReadonlyArray<string>>
  /** A queue's sizes per state, memory, latency and today's counters. */
  readonly getQueueInfo: (queue: string) => Promise<QueueInfo>
  /** Processed and failed counts per UTC day, today first (1 to 90 days). */
  readonly history: (queue: string, days: number) => Promise<ReadonlyArray<DailyStats>>
  /** The queue's aggregation groups and their sizes. */
  readonly groups: (queue: string) => Promise<ReadonlyArray<GroupInfo>>
  /** One page of a queue's tasks in a state, in asynq's order. */
  readonly listTasks: (queue: string, state: TaskState, options?: ListOptions) => Promise<ReadonlyArray<TaskInfo>>
  /** One task. */
  readonly getTaskInfo: (queue: string, id: string) => Promise<TaskInfo>
  /** Moves one task to pending. */
  readonly runTask: (queue: string, id: string) => Promise<TaskActionResult>
  /** Moves one task to the archive. */
  readonly archiveTask: (queue: string, id: string) => Promise<TaskActionResult>
  /** Deletes one task (not while it is active), releasing its uniqueness lock. */
  readonly deleteTask: (queue: string, id: string) => Promise<TaskActionResult>
  /** Moves every task of a state (or group) to pending, in bounded batches; resolves with the count. */
  readonly runAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  /** Archives every task of a state (or group), in bounded batches; resolves with the count. */
  readonly archiveAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  /** Deletes every task of a state (or group), in bounded batches; resolves with the count. */
  readonly deleteAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  /** Pauses a queue: workers stop taking its tasks. */
  readonly pauseQueue: (queue: string) => Promise<void>
  /** Resumes a paused queue. */
  readonly unpauseQueue: (queue: string) => Promise<void>
  /**
   * Sets a queue's flow-control limit (a rate and/or a concurrency cap, global across every
   * effect-asynq worker), replacing the one it had; resolves with the limit as stored.
   */
  readonly setQueueLimit: (queue: string, limit: QueueLimit) => Promise<QueueLimitInfo>
  /** Removes a queue's flow-control limit (the queue is unlimited again). */
  readonly clearQueueLimit: (queue: string) => Promise<void>
  /** Deletes a queue (with `force`, its tasks too; never while one is active). */
  readonly deleteQueue: (queue: string, options?: DeleteQueueOptions) => Promise<{ readonly deletedTasks: number }>
  /** Asks the server running a task to cancel it (best effort); resolves with how many servers heard it. */
  readonly cancelProcessing: (taskId: string) => Promise<{ readonly receivers: number }>
  /** The live servers and their active workers. */
  readonly servers: () => Promise<ReadonlyArray<ServerDetails>>
  /** The periodic-task entries of running schedulers. */
  readonly schedulerEntries: () => Promise<ReadonlyArray<SchedulerEntryDetails>>
  /** What a periodic-task entry enqueued, newest first. */
  readonly schedulerHistory: (
    entryId: string,
    options?: { readonly page?: number; readonly pageSize?: number }
  ) => Promise<ReadonlyArray<EnqueueEventDetails>>
  /** The Redis Cluster hash slot of a queue's keys. */
  readonly clusterKeySlot: (queue: string) => Promise<number>
  /** The Redis Cluster nodes serving a queue. */
  readonly clusterNodes: (queue: string) => Promise<ReadonlyArray<ClusterNode>>
  /** Redis INFO (each master of a cluster), raw and parsed. */
  readonly redisInfo: () => Promise<ReadonlyArray<RedisNodeInfo>>
  /** The workflows whose control queues are registered under a prefix (default "workflow"), with their queues. */
  readonly listWorkflows: (options?: Pick<WorkflowInspectOptions, "queue">) => Promise<ReadonlyArray<WorkflowSummary>>
  /** One page of a workflow's executions with their state (bounded work per page; pass the page's `cursor` for the next). */
  readonly listWorkflowExecutions: (workflow: string, options?: ListExecutionsOptions) => Promise<ExecutionsPage>
  /** One workflow execution in detail: state, payload, result, activities, deferreds, clocks. */
  readonly getWorkflowExecution: (
    workflow: string,
    executionId: string,
    options?: WorkflowInspectOptions
  ) => Promise<WorkflowExecutionInfo>
  /** Resumes an execution as `Workflow.resume` does (also retries one suspended by SuspendOnFailure). */
  readonly resumeWorkflowExecution: (
    workflow: string,
    executionId: string,
    options?: WorkflowActionOptions
  ) => Promise<WorkflowActionResult>
  /** Cancels an execution as `Workflow.interrupt` does. */
  readonly cancelWorkflowExecution: (
    workflow: string,
    executionId: string,
    options?: WorkflowActionOptions
  ) => Promise<WorkflowActionResult>
  /** Closes the Redis connection. Safe to call more than once. */
  readonly close: () => Promise<void>
}

export { RuntimeClosed }

/**
 * An inspector with its own Redis connection, opened on first use and reused (a failed connect is
 * retried by the next call). Without `url`, `cluster` and `sentinel` it uses `REDIS_URL`, then
 * redis://127.0.0.1:6379. `close()` when done; calls after it reject with RuntimeClosed.
 */
export const createInspector = (options: InspectorOptions = {}): Inspector => {
  const rt = makeBrokerRuntime(options, {
    closedError: () =>
      new RuntimeClosed({ message: "the effect-asynq inspector is closed; create a new one with createInspector()" })
  })
  const run = <A, E>(eff: Effect.Effect<A, E, Broker>): Promise<A> => rt.run(eff)
  return {
    queues: () => run(queues()),
    getQueueInfo: (q) => run(getQueueInfo(q)),
    history: (q, days) => run(history(q, days)),
    groups: (q) => run(groups(q)),
    listTasks: (q, state, o) => run(listTasks(q, state, o)),
    getTaskInfo: (q, id) => run(getTaskInfo(q, id)),
    runTask: (q, id) => run(runTask(q, id)),
    archiveTask: (q, id) => run(archiveTask(q, id)),
    deleteTask: (q, id) => run(deleteTask(q, id)),
    runAll: (q, state, o) => run(runAll(q, state, o)),
    archiveAll: (q, state, o) => run(archiveAll(q, state, o)),
    deleteAll: (q, state, o) => run(deleteAll(q, state, o)),
    pauseQueue: (q) => run(pauseQueue(q)),
    unpauseQueue: (q) => run(unpauseQueue(q)),
    setQueueLimit: (q, l) => run(setQueueLimit(q, l)),
    clearQueueLimit: (q) => run(clearQueueLimit(q)),
    deleteQueue: (q, o) => run(deleteQueue(q, o)),
    cancelProcessing: (id) => run(cancelProcessing(id)),
    servers: () => run(servers()),
    schedulerEntries: () => run(schedulerEntries()),
    schedulerHistory: (id, o) => run(schedulerHistory(id, o)),
    clusterKeySlot: (q) => run(clusterKeySlot(q)),
    clusterNodes: (q) => run(clusterNodes(q)),
    redisInfo: () => run(redisInfo()),
    listWorkflows: (o) => run(listWorkflows(o)),
    listWorkflowExecutions: (w, o) => run(listWorkflowExecutions(w, o)),
    getWorkflowExecution: (w, id, o) => run(getWorkflowExecution(w, id, o)),
    resumeWorkflowExecution: (w, id, o) => run(resumeWorkflowExecution(w, id, o)),
    cancelWorkflowExecution: (w, id, o) => run(cancelWorkflowExecution(w, id, o)),
    close: rt.close
  }
}
