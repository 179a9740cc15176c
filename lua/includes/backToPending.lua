-- includes/backToPending.lua: gives a leased task that did not run back to the head of pending.
-- Defines backToPending(activeKey, leaseKey, pendingKey, taskKeyPrefix, taskId, now)
--   activeKey      asynq:{q}:active
--   leaseKey       asynq:{q}:lease      (its entry is removed in any case)
--   pendingKey     asynq:{q}:pending    (RPUSH: the next dequeue takes it first)
--   taskKeyPrefix  asynq:{q}:t:
--   taskId         the task's id
--   now            unix nanoseconds (string): its pending_since
-- Returns true when the task left active and went back ("pending"); false when it was not active.
local function backToPending(activeKey, leaseKey, pendingKey, taskKeyPrefix, taskId, now)
  redis.call("ZREM", leaseKey, taskId)
  if redis.call("LREM", activeKey, 1, taskId) == 0 then
    return false
  end
  redis.call("RPUSH", pendingKey, taskId)
  redis.call("HSET", taskKeyPrefix .. taskId, "state", "pending", "pending_since", now)
  return true
end
