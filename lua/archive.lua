-- archive: active -> archived (zset score = archive time), msg rewritten (error_msg,
-- last_failed_at), state "archived"; counts the task as processed and failed (daily keys with
-- expiry, and totals). Then trims the archive: entries scored at or before ARGV[4] and the oldest
-- entries beyond ARGV[5] are removed together with their task hashes. With ARGV[7] set (recovery
-- of an expired lease) the move happens only while the lease score is still <= ARGV[7].
-- A task with a keep-last key (hash field keep_last, lua/enqueueKeepLast.lua: one HGET) that was
-- its key's current task releases the key's waiting task here (it becomes pending and current) or
-- frees the key (includes/keepLastFree.lua; keys built from KEYS[1]: same slot), so a task the
-- recoverer archives does not hold its key until the next enqueue or maxWait.
-- KEYS[1] asynq:{q}:t:                     (task key prefix)
-- KEYS[2] asynq:{q}:active
-- KEYS[3] asynq:{q}:lease
-- KEYS[4] asynq:{q}:archived
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd>  (UTC date of now)
-- KEYS[6] asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[7] asynq:{q}:processed
-- KEYS[8] asynq:{q}:failed
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (already updated)
-- ARGV[3] archived at (now), unix seconds
-- ARGV[4] trim cutoff, unix seconds (now - 90 days by default)
-- ARGV[5] maximum number of archived tasks kept (10000 by default, >= 1)
-- ARGV[6] daily stat key expiry, unix seconds
-- ARGV[7] lease cutoff, unix seconds, or "" (the caller holds the lease)
-- ARGV[8] now, unix nanoseconds (pending_since of a released keep-last task)
-- Returns: {1, trimmed} done; {2, 0} already done by this very call (ARGV[7] = "": the task is
-- archived holding exactly ARGV[2] — a resend of a call that ran but whose reply was lost; nothing
-- is written or counted again); {0, 0} the task is not active under a (matching) lease (nothing
-- was changed, except that a lease entry for a task missing from the active list is removed as stale).
--- @include "includes/leaveActive.lua"
--- @include "includes/trimArchive.lua"
--- @include "includes/countDone.lua"
--- @include "includes/keepLastState.lua"
--- @include "includes/keepLastFree.lua"
local taskKeyPrefix, activeKey, leaseKey, archivedKey,
  processedDayKey, failedDayKey, processedTotalKey, failedTotalKey = unpack(KEYS)
local taskId, msg, archivedAt, trimCutoff, maxArchived, statExpireAt, leaseCutoff, nowNanos = unpack(ARGV)
if not leaveActive(activeKey, leaseKey, taskId, leaseCutoff, true) then
  if leaseCutoff == "" and redis.call("HGET", taskKeyPrefix .. taskId, "msg") == msg and redis.call("ZSCORE", archivedKey, taskId) then
    return {2, 0}
  end
  return {0, 0}
end
redis.call("ZADD", archivedKey, archivedAt, taskId)
redis.call("HSET", taskKeyPrefix .. taskId, "msg", msg, "state", "archived")
local trimmed = trimArchive(archivedKey, taskKeyPrefix, trimCutoff, maxArchived, nil)
countDone(statExpireAt, processedDayKey, processedTotalKey, failedDayKey, failedTotalKey)
local keepLast = redis.call("HGET", taskKeyPrefix .. taskId, "keep_last")
if keepLast then
  local queuePrefix = string.sub(taskKeyPrefix, 1, -3)
  keepLastFree(queuePrefix, keepLast, taskId, nowNanos, string.sub(queuePrefix, 8, -3))
end
return {1, trimmed}
