/**
 * The inspector: read and administer queues and tasks (asynq's Inspector), as Effects over
 * `Broker`. Works on queues written by effect-asynq and by Go asynq alike.
 */
export * from "./errors.js"
export * from "./types.js"
export * from "./serverTypes.js"
export { queues } from "./queues.js"
export { getQueueInfo } from "./queueInfo.js"
export { history } from "./history.js"
export { groups } from "./groups.js"
export { defaultPageSize, listTasks } from "./listTasks.js"
export { getTaskInfo } from "./getTaskInfo.js"
export { archiveTask, deleteTask, runTask, type TaskActionResult } from "./taskActions.js"
export { archiveAll, defaultBatchSize, deleteAll, runAll } from "./bulkActions.js"
export { deleteQueue, type DeleteQueueOptions } from "./deleteQueue.js"
export {
  cancelProcessing,
  clearQueueLimit,
  getQueueFlow,
  getQueueLimit,
  pauseQueue,
  setQueueLimit,
  unpauseQueue
} from "./control.js"
export {
  parseRate,
  type PerKeyLimit,
  type PerKeyLimitInfo,
  type QueueLimit,
  type QueueLimitInfo,
  type RatePeriod,
  type StoredRate
} from "../steps/queueLimit.js"
export { servers } from "./servers.js"
export { schedulerEntries, schedulerHistory } from "./scheduler.js"
export { clusterKeySlot, clusterNodes } from "./cluster.js"
export {
  listWorkflowExecutions,
  type ExecutionsPage,
  type ExecutionsPageOptions,
  type ListExecutionsOptions,
  type NumberedExecutionsPage,
  workflowExecutionsPage
} from "./listWorkflowExecutions.js"
export { getWorkflowExecution } from "./getWorkflowExecution.js"
export {
  cancelWorkflowExecution,
  resumeWorkflowExecution,
  type WorkflowActionOptions,
  type WorkflowActionResult
} from "./workflowActions.js"
export {
  type ActivityInfo,
  type ClockInfo,
  type DeferredInfo,
  type ExecutionOutcome,
  type ExecutionState,
  type ExecutionStateFilter,
  executionStateFilters,
  type WorkflowExecutionInfo,
  type WorkflowExecutionSummary,
  type WorkflowInspectOptions,
  listWorkflows,
  type WorkflowSummary
} from "./workflowTypes.js"
export { createInspector, type Inspector, type InspectorOptions, RuntimeClosed } from "./promise.js"
export { parseRedisInfo, redisInfo, type RedisNodeInfo } from "./redisInfo.js"
