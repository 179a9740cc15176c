-- requeue: active -> pending, at the head (RPUSH: the next dequeue takes it), state "pending",
-- pending_since = now. The lease is dropped.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:   (task key prefix)
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- Returns: 1 done; 2 already done by this very call (the task is pending with pending_since =
-- ARGV[2]: a resend of a call that ran but whose reply was lost; nothing is changed again); 0 the
-- task is not active under a lease (nothing was changed).
--- @include "includes/leaveActive.lua"
local activeKey, leaseKey, pendingKey, taskKeyPrefix = unpack(KEYS)
local taskId, now = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
if not leaveActive(activeKey, leaseKey, taskId, "", false) then
  if redis.call("HGET", taskKey, "state") == "pending" and redis.call("HGET", taskKey, "pending_since") == now then
    return 2
  end
  return 0
end
redis.call("RPUSH", pendingKey, taskId)
redis.call("HSET", taskKey, "state", "pending", "pending_since", now)
return 1
