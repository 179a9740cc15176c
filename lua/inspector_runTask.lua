-- inspector_runTask: scheduled | retry | archived | completed | aggregating -> pending (asynq's
-- RunTask). The task is pushed to the head of pending (LPUSH, like enqueue), state "pending" and
-- pending_since = now. A group left empty is removed from the groups set.
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; state zsets and g:<group> are built from it)
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- Returns {1, previous state} done; {0, ""} no such task; {-1, state} refused (pending or
-- active), nothing changed.
--- @include "includes/leaveState.lua"
local taskKey, queuePrefix, pendingKey, groupsKey = unpack(KEYS)
local taskId, now = unpack(ARGV)
local state, refusal = leaveState(taskKey, queuePrefix, groupsKey, taskId, {pending = true, active = true})
if refusal then
  return refusal
end
redis.call("LPUSH", pendingKey, taskId)
redis.call("HSET", taskKey, "state", "pending", "pending_since", now)
return {1, state}
