/**
 * The steps (`Steps` in `effect-asynq`): every queue operation as a composable Effect over the
 * `Broker` service, each one atomic state transition (one Lua script) or a bounded sweep of them.
 * The same steps run inside the long-lived Server, the serverless drain and maintenance tick, and
 * pipelines users compose.
 */
export {
  enqueue,
  type EnqueueError,
  type EnqueueItem,
  enqueueMany,
  enqueueMessage,
  type EnqueueMessageOptions
} from "./enqueue.js"
export { defaultMaxRetry, defaultQueue, defaultTimeoutSec, type EnqueueOptions } from "./options.js"
export type { TaskInfo } from "./taskInfo.js"
export {
  dequeueLease,
  type DequeueLeaseOptions,
  type DequeueLeaseResult,
  type FlowLimited,
  type LeasedTask
} from "./dequeueLease.js"
export type { CorruptTask } from "./corrupt.js"
export { extendLease, type ExtendLeaseOptions, type ExtendLeaseResult } from "./extendLease.js"
export { complete, type CompleteResult, completeMany } from "./complete.js"
export { requeue } from "./requeue.js"
export { retry, type RetryOptions } from "./retry.js"
export { defaultRetryDelayMs } from "./retryDelay.js"
export { archive, type ArchiveOptions } from "./archive.js"
export { writeResult, type WriteResultOptions } from "../broker/writeResult.js"
export { forward, type ForwardOptions, type ForwardResult } from "./forward.js"
export { recover, type RecoverOptions, type RecoverResult } from "./recover.js"
export { type AggregationSetRef, checkGroups, type CheckGroupsOptions } from "./checkGroups.js"
export {
  type AggregationSetContent,
  type AggregationSetId,
  deleteAggregationSet,
  readAggregationSet
} from "./aggregationSet.js"
export { reclaimStaleAggregationSets, type ReclaimOptions } from "./reclaimStaleAggregationSets.js"
export {
  aggregate,
  type AggregatedTask,
  type AggregateFailure,
  type AggregateOptions,
  type AggregateResult,
  type GroupAggregator
} from "./aggregate.js"
export { janitor, type JanitorOptions, type JanitorResult } from "./janitor.js"
export type { QueueFailure } from "./queueFailures.js"
export { pauseQueue, unpauseQueue } from "./pauseQueue.js"
export {
  type EnqueueModeError,
  type EnqueueModeOptions,
  enqueueThrottled,
  type EnqueueThrottledResult
} from "./enqueueThrottled.js"
export { enqueueDebounced, type EnqueueDebouncedResult } from "./enqueueDebounced.js"
export { enqueueKeepLast, type EnqueueKeepLastOptions, type EnqueueKeepLastResult } from "./enqueueKeepLast.js"
export {
  clearQueueLimit,
  getQueueLimit,
  parseRate,
  type PerKeyLimit,
  type PerKeyLimitInfo,
  type QueueLimit,
  type QueueLimitInfo,
  type RatePeriod,
  setQueueLimit,
  type StoredRate
} from "./queueLimit.js"
export { publishCancel } from "../broker/publishCancel.js"
