/**
 * Scheduler key names. asynq's own (`asynq:schedulers`, `asynq:schedulers:{<id>}`,
 * `asynq:scheduler_history:<entryId>`) come from src/wire/keys.ts; the per-entry record that makes
 * enqueues exactly-once is ours. It lives in the slot of the queue the entry enqueues to, so the
 * claim and the task write can be one atomic script on a Redis Cluster too.
 */
import { queueKeys } from "../wire/keys.js"

/** The record of one periodic entry: `asynq:{<queue>}:scheduler:<entryId>` (hash: through, prev, task). */
export const entryRecordKey = (queue: string, entryId: string): string => `${queueKeys(queue).prefix}scheduler:${entryId}`

export { allSchedulers, schedulerEntriesKey, schedulerHistoryKey } from "../wire/keys.js"
