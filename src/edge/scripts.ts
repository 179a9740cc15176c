/**
 * The Lua scripts each edge entry point can run, imported one by one (lua.generated.ts has one
 * export per script) so a bundle carries only the sources its entry points name.
 */
import {
  lua_addToGroup,
  lua_archive,
  lua_archiveCorrupt,
  lua_checkGroups,
  lua_deleteAggregationSet,
  lua_enqueue,
  lua_forward,
  lua_janitor,
  lua_listLeaseExpired,
  lua_readAggregationSet,
  lua_reclaimStaleAggregationSets,
  lua_registerQueue,
  lua_retry,
  lua_schedule,
  lua_scheduler_announce,
  lua_scheduler_claim,
  lua_scheduler_history,
  lua_scheduler_publish,
  lua_scheduler_record
} from "../redis/lua.generated.js"
import type { ScriptSources } from "../redis/httpRedis.js"

/** enqueue / enqueueMany: a new task to pending, scheduled or its group, and the queue registration. */
export const enqueueScripts: ScriptSources = {
  enqueue: lua_enqueue,
  schedule: lua_schedule,
  addToGroup: lua_addToGroup,
  registerQueue: lua_registerQueue
}

/** The maintenance tick: forward, recover (retry, archive, set aside corrupt), aggregate (its aggregated tasks are enqueued), janitor. */
export const maintenanceScripts: ScriptSources = {
  // Listed, not spread from enqueueScripts: a spread is not tree-shakable, so every bundle would carry these sources.
  enqueue: lua_enqueue,
  schedule: lua_schedule,
  addToGroup: lua_addToGroup,
  registerQueue: lua_registerQueue,
  forward: lua_forward,
  listLeaseExpired: lua_listLeaseExpired,
  retry: lua_retry,
  archive: lua_archive,
  archiveCorrupt: lua_archiveCorrupt,
  checkGroups: lua_checkGroups,
  readAggregationSet: lua_readAggregationSet,
  deleteAggregationSet: lua_deleteAggregationSet,
  reclaimStaleAggregationSets: lua_reclaimStaleAggregationSets,
  janitor: lua_janitor
}

/** The scheduler tick: records, claims (which write the task), history, publication for asynq's tools. */
export const schedulerScripts: ScriptSources = {
  registerQueue: lua_registerQueue,
  scheduler_record: lua_scheduler_record,
  scheduler_claim: lua_scheduler_claim,
  scheduler_history: lua_scheduler_history,
  scheduler_publish: lua_scheduler_publish,
  scheduler_announce: lua_scheduler_announce
}
