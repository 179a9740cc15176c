/**
 * The Lua scripts each edge entry point can run, imported one by one (lua.generated.ts has one
 * export per script) so a bundle carries only the sources its entry points name.
 */
import {
  addToGroupLua,
  archiveLua,
  archiveCorruptLua,
  checkGroupsLua,
  deleteAggregationSetLua,
  enqueueBatchLua,
  enqueueLua,
  forwardLua,
  janitorLua,
  listLeaseExpiredLua,
  readAggregationSetLua,
  reclaimStaleAggregationSetsLua,
  registerQueueLua,
  retryLua,
  scheduleLua,
  scheduler_announceLua,
  scheduler_claimLua,
  scheduler_historyLua,
  scheduler_publishLua,
  scheduler_recordLua
} from "../redis/lua.generated.js"
import type { ScriptSources } from "../redis/httpRedis.js"

/** enqueue / enqueueMany: a new task to pending, scheduled or its group, and the queue registration. */
export const enqueueScripts: ScriptSources = {
  enqueue: enqueueLua,
  enqueueBatch: enqueueBatchLua,
  schedule: scheduleLua,
  addToGroup: addToGroupLua,
  registerQueue: registerQueueLua
}

/** The maintenance tick: forward, recover (retry, archive, set aside corrupt), aggregate (its aggregated tasks are enqueued), janitor. */
export const maintenanceScripts: ScriptSources = {
  // Listed, not spread from enqueueScripts: a spread is not tree-shakable, so every bundle would carry these sources.
  enqueue: enqueueLua,
  enqueueBatch: enqueueBatchLua,
  schedule: scheduleLua,
  addToGroup: addToGroupLua,
  registerQueue: registerQueueLua,
  forward: forwardLua,
  listLeaseExpired: listLeaseExpiredLua,
  retry: retryLua,
  archive: archiveLua,
  archiveCorrupt: archiveCorruptLua,
  checkGroups: checkGroupsLua,
  readAggregationSet: readAggregationSetLua,
  deleteAggregationSet: deleteAggregationSetLua,
  reclaimStaleAggregationSets: reclaimStaleAggregationSetsLua,
  janitor: janitorLua
}

/** The scheduler tick: records, claims (which write the task), history, publication for asynq's tools. */
export const schedulerScripts: ScriptSources = {
  registerQueue: registerQueueLua,
  scheduler_record: scheduler_recordLua,
  scheduler_claim: scheduler_claimLua,
  scheduler_history: scheduler_historyLua,
  scheduler_publish: scheduler_publishLua,
  scheduler_announce: scheduler_announceLua
}
