-- requeue: active -> pending, at the head (RPUSH: the next dequeue takes it), state "pending",
-- pending_since = now. The lease is dropped.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:   (task key prefix)
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- Returns: 1 done; 0 the task is not active under a lease (nothing was changed).
--- @include "includes/leaveActive.lua"
local activeKey, leaseKey, pendingKey, taskKeyPrefix = unpack(KEYS)
local taskId, now = unpack(ARGV)
if not leaveActive(activeKey, leaseKey, taskId, "", false) then
  return 0
end
redis.call("RPUSH", pendingKey, taskId)
redis.call("HSET", taskKeyPrefix .. taskId, "state", "pending", "pending_since", now)
return 1
