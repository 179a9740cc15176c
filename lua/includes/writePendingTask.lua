-- includes/writePendingTask.lua: writes a new task as pending: its hash (msg, state "pending",
-- pending_since, and unique_key when it holds a lock) and its id LPUSHed on the pending list; when
-- that push makes the list non-empty the queue name is published on "effect-asynq:wake", so idle
-- workers wake at once.
-- Defines writePendingTask(taskKey, taskId, msg, pendingSince, lockKey, pendingKey, queueName)
--   taskKey       asynq:{q}:t:<id>
--   taskId        the task's id
--   msg           encoded TaskMessage
--   pendingSince  unix nanoseconds (string)
--   lockKey       the uniqueness lock the task holds, or nil
--   pendingKey    asynq:{q}:pending
--   queueName     the queue's name (the wake message)
-- Returns nothing.
-- Defines writePendingHash(taskKey, msg, pendingSince, lockKey): the hash part alone (the caller
-- pushes the id). Returns nothing.
local function writePendingHash(taskKey, msg, pendingSince, lockKey)
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "pending", "pending_since", pendingSince, "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "pending", "pending_since", pendingSince)
  end
end
local function writePendingTask(taskKey, taskId, msg, pendingSince, lockKey, pendingKey, queueName)
  writePendingHash(taskKey, msg, pendingSince, lockKey)
  if redis.call("LPUSH", pendingKey, taskId) == 1 then
    redis.call("PUBLISH", "effect-asynq:wake", queueName)
  end
end
