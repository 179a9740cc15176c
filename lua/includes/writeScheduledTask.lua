-- includes/writeScheduledTask.lua: writes a new task as scheduled: its hash (msg, state
-- "scheduled", unique_key when it holds a lock; no pending_since) and its id in the scheduled
-- zset for its process-at time (includes/delayTask.lua: whole seconds rounded up in the scheduled
-- zset, the exact time in due_ms, a wake-up for the forwarders when it is the queue's earliest).
-- Defines writeScheduledTask(taskKey, taskId, msg, processAtMs, lockKey, scheduledKey, queueName)
--   taskKey       asynq:{q}:t:<id>
--   taskId        the task's id
--   msg           encoded TaskMessage
--   processAtMs   the process-at time, unix ms (decimal string)
--   lockKey       the uniqueness lock the task holds, or nil
--   scheduledKey  asynq:{q}:scheduled (must end in "scheduled": the queue's other keys derive from it)
--   queueName     the queue's name
-- Returns nothing.
--- @include "includes/delayTask.lua"
local function writeScheduledTask(taskKey, taskId, msg, processAtMs, lockKey, scheduledKey, queueName)
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled")
  end
  delayTask(string.sub(scheduledKey, 1, -10), scheduledKey, taskId, processAtMs, queueName)
end
