-- inspector_queueStats: read-only snapshot of one queue's counters (asynq's CurrentStats).
-- KEYS[1]  asynq:{q}:pending
-- KEYS[2]  asynq:{q}:active
-- KEYS[3]  asynq:{q}:scheduled
-- KEYS[4]  asynq:{q}:retry
-- KEYS[5]  asynq:{q}:archived
-- KEYS[6]  asynq:{q}:completed
-- KEYS[7]  asynq:{q}:processed:<yyyy-mm-dd>  (today, UTC)
-- KEYS[8]  asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[9]  asynq:{q}:processed                (total)
-- KEYS[10] asynq:{q}:failed                   (total)
-- KEYS[11] asynq:{q}:paused
-- KEYS[12] asynq:{q}:groups
-- KEYS[13] asynq:{q}:t:                       (task key prefix)
-- KEYS[14] asynq:{q}:g:                       (group key prefix)
-- ARGV: none
-- Returns {pending, active, scheduled, retry, archived, completed, processed today, failed today,
-- processed total, failed total, paused (0/1), group count, aggregating count,
-- oldest pending task's pending_since (unix ns as a string, "" when none)}.
local pendingKey, activeKey, scheduledKey, retryKey, archivedKey, completedKey,
  processedDayKey, failedDayKey, processedTotalKey, failedTotalKey,
  pausedKey, groupsKey, taskKeyPrefix, groupKeyPrefix = unpack(KEYS)
local function counter(key)
  return tonumber(redis.call("GET", key) or "0") or 0
end
local res = {}
res[1] = redis.call("LLEN", pendingKey)
res[2] = redis.call("LLEN", activeKey)
res[3] = redis.call("ZCARD", scheduledKey)
res[4] = redis.call("ZCARD", retryKey)
res[5] = redis.call("ZCARD", archivedKey)
res[6] = redis.call("ZCARD", completedKey)
res[7] = counter(processedDayKey)
res[8] = counter(failedDayKey)
res[9] = counter(processedTotalKey)
res[10] = counter(failedTotalKey)
res[11] = redis.call("EXISTS", pausedKey)
local groups = redis.call("SMEMBERS", groupsKey)
res[12] = #groups
local aggregating = 0
for _, g in ipairs(groups) do
  aggregating = aggregating + redis.call("ZCARD", groupKeyPrefix .. g)
end
res[13] = aggregating
local oldest = ""
if res[1] > 0 then
  local id = redis.call("LINDEX", pendingKey, -1)
  oldest = redis.call("HGET", taskKeyPrefix .. id, "pending_since") or ""
end
res[14] = oldest
return res
