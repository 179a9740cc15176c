-- includes/releaseUniqueLock.lua: releases a task's uniqueness lock, only while the lock still
-- holds this task's id (a lock taken since by another task is left alone).
-- Defines releaseUniqueLock(lockKey, taskId, lockPrefix)
--   lockKey     asynq:{q}:unique:<...>, or nil/false (no lock: nothing is done)
--   taskId      the task's id
--   lockPrefix  asynq:{q}:unique: (only a lock key under it is touched), or nil (no check)
-- Returns nothing.
local function releaseUniqueLock(lockKey, taskId, lockPrefix)
  if not lockKey then
    return
  end
  if lockPrefix and string.sub(lockKey, 1, #lockPrefix) ~= lockPrefix then
    return
  end
  if redis.call("GET", lockKey) == taskId then
    redis.call("DEL", lockKey)
  end
end
