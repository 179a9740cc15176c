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
import { cancelProcessing, pauseQueue, unpauseQueue } from "./control.js"
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
import type { BulkOptions, ClusterNode, DailyStats, GroupInfo, ListOptions, QueueInfo } from "./types.js"

export type InspectorOptions = RedisOptions

export interface Inspector {
  readonly queues: () => Promise<ReadonlyArray<string>>
  readonly getQueueInfo: (queue: string) => Promise<QueueInfo>
  readonly history: (queue: string, days: number) => Promise<ReadonlyArray<DailyStats>>
  readonly groups: (queue: string) => Promise<ReadonlyArray<GroupInfo>>
  readonly listTasks: (queue: string, state: TaskState, options?: ListOptions) => Promise<ReadonlyArray<TaskInfo>>
  readonly getTaskInfo: (queue: string, id: string) => Promise<TaskInfo>
  readonly runTask: (queue: string, id: string) => Promise<TaskActionResult>
  readonly archiveTask: (queue: string, id: string) => Promise<TaskActionResult>
  readonly deleteTask: (queue: string, id: string) => Promise<TaskActionResult>
  readonly runAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  readonly archiveAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  readonly deleteAll: (queue: string, state: TaskState, options?: BulkOptions) => Promise<number>
  readonly pauseQueue: (queue: string) => Promise<void>
  readonly unpauseQueue: (queue: string) => Promise<void>
  readonly deleteQueue: (queue: string, options?: DeleteQueueOptions) => Promise<{ readonly deletedTasks: number }>
  readonly cancelProcessing: (taskId: string) => Promise<{ readonly receivers: number }>
  readonly servers: () => Promise<ReadonlyArray<ServerDetails>>
  readonly schedulerEntries: () => Promise<ReadonlyArray<SchedulerEntryDetails>>
  readonly schedulerHistory: (entryId: string, options?: { readonly page?: number; readonly pageSize?: number }) => Promise<ReadonlyArray<EnqueueEventDetails>>
  readonly clusterKeySlot: (queue: string) => Promise<number>
  readonly clusterNodes: (queue: string) => Promise<ReadonlyArray<ClusterNode>>
  /** Redis INFO (each master of a cluster), raw and parsed. */
  readonly redisInfo: () => Promise<ReadonlyArray<RedisNodeInfo>>
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
    closedError: () => new RuntimeClosed({ message: "the effect-asynq inspector is closed; create a new one with createInspector()" })
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
    deleteQueue: (q, o) => run(deleteQueue(q, o)),
    cancelProcessing: (id) => run(cancelProcessing(id)),
    servers: () => run(servers()),
    schedulerEntries: () => run(schedulerEntries()),
    schedulerHistory: (id, o) => run(schedulerHistory(id, o)),
    clusterKeySlot: (q) => run(clusterKeySlot(q)),
    clusterNodes: (q) => run(clusterNodes(q)),
    redisInfo: () => run(redisInfo()),
    close: rt.close
  }
}
