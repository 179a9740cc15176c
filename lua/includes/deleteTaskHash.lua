-- includes/deleteTaskHash.lua: deletes a task's hash and releases the uniqueness lock it still
-- holds (the lock key is read from the hash field unique_key).
--- @include "includes/releaseUniqueLock.lua"
-- Defines deleteTaskHash(taskKey, taskId, lockPrefix)
--   taskKey     asynq:{q}:t:<id>
--   taskId      the task's id
--   lockPrefix  asynq:{q}:unique: (only a lock key under it is released)
-- Returns nothing.
local function deleteTaskHash(taskKey, taskId, lockPrefix)
  releaseUniqueLock(redis.call("HGET", taskKey, "unique_key"), taskId, lockPrefix)
  redis.call("DEL", taskKey)
end
