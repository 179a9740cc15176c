-- includes/writeScheduledTask.lua: writes a new task as scheduled: its hash (msg, state
-- "scheduled", unique_key when it holds a lock; no pending_since) and its id in the scheduled
-- zset, scored by the process-at time.
-- Defines writeScheduledTask(taskKey, taskId, msg, processAt, lockKey, scheduledKey)
--   taskKey       asynq:{q}:t:<id>
--   taskId        the task's id
--   msg           encoded TaskMessage
--   processAt     unix seconds (the zset score)
--   lockKey       the uniqueness lock the task holds, or nil
--   scheduledKey  asynq:{q}:scheduled
-- Returns nothing.
local function writeScheduledTask(taskKey, taskId, msg, processAt, lockKey, scheduledKey)
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled")
  end
  redis.call("ZADD", scheduledKey, processAt, taskId)
end
