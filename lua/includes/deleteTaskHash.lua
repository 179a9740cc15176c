-- includes/deleteTaskHash.lua: deletes a task's hash and releases the uniqueness lock it still
-- holds (the lock key is read from the hash field unique_key, in the one HMGET that also reads
-- keep_last, the task's keep-last key, lua/enqueueKeepLast.lua).
--- @include "includes/releaseUniqueLock.lua"
-- Defines deleteTaskHash(taskKey, taskId, lockPrefix)
--   taskKey     asynq:{q}:t:<id>
--   taskId      the task's id
--   lockPrefix  asynq:{q}:unique: (only a lock key under it is released)
-- Returns the task's keep-last key (hash field keep_last), or nil/false.
local function deleteTaskHash(taskKey, taskId, lockPrefix)
  local fields = redis.call("HMGET", taskKey, "unique_key", "keep_last")
  releaseUniqueLock(fields[1], taskId, lockPrefix)
  redis.call("DEL", taskKey)
  return fields[2]
end
