-- inspector_deleteTask: any state but active -> deleted (asynq's DeleteTask). Removes the id from
-- its state's list/zset, deletes the hash, and releases the task's uniqueness lock if it still
-- holds it. A group left empty is removed from the groups set. A task with a keep-last key (hash
-- field keep_last, read with the lock) that was its key's current task releases the key's waiting
-- task (it becomes pending and current) or frees the key; one that was the key's waiting task
-- leaves it (includes/keepLastFree.lua; keys built from KEYS[2]: same slot).
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; pending, state zsets, g:<group> built from it)
-- KEYS[3] asynq:{q}:groups
-- KEYS[4] asynq:{q}:unique:   (only lock keys under this prefix are touched)
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (pending_since of a released keep-last task)
-- Returns {1, previous state} done; {0, ""} no such task; {-1, "active"} refused.
--- @include "includes/deleteTaskHash.lua"
--- @include "includes/keepLastState.lua"
--- @include "includes/keepLastFree.lua"
local taskKey, queuePrefix, groupsKey, lockPrefix = unpack(KEYS)
local taskId, nowNanos = ARGV[1], ARGV[2]
if redis.call("EXISTS", taskKey) == 0 then
  return {0, ""}
end
local fields = redis.call("HMGET", taskKey, "state", "group")
local state, group = fields[1], fields[2]
if state == "active" then
  return {-1, state}
end
if state == "pending" then
  redis.call("LREM", queuePrefix .. "pending", 0, taskId)
elseif state == "aggregating" then
  local groupKey = queuePrefix .. "g:" .. tostring(group)
  redis.call("ZREM", groupKey, taskId)
  if redis.call("ZCARD", groupKey) == 0 then
    redis.call("SREM", groupsKey, group)
  end
elseif state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  redis.call("ZREM", queuePrefix .. state, taskId)
end
local keepLast = deleteTaskHash(taskKey, taskId, lockPrefix)
if keepLast then
  keepLastFree(queuePrefix, keepLast, taskId, nowNanos, string.sub(queuePrefix, 8, -3))
end
return {1, tostring(state)}
