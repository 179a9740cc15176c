-- includes/newTask.lua: the checks and the lock of a new task's write (enqueue, schedule,
-- addToGroup, scheduler_claim). Checks come first; nothing is written unless both pass.
-- Defines newTaskRefusal(taskKey, lockKey)
--   taskKey  asynq:{q}:t:<id>
--   lockKey  asynq:{q}:unique:<type>:<md5(payload)>, or nil (no uniqueness)
-- Returns -1 the lock is held by another task; 0 a task with this id exists; nil go ahead.
-- Defines takeUniqueLock(lockKey, taskId, lockTtlMs): SET lockKey taskId PX lockTtlMs, when
-- lockKey is not nil. Returns nothing.
-- Defines addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, write): the whole write of enqueue,
-- schedule and addToGroup: the checks, then the lock, then write() (a function writing the task).
-- A write refused by the checks whose task hash already holds this same message (same id; the
-- same bytes, or the same message in other bytes: sameTaskMessage, e.g. Go asynq wrote it with
-- its headers in another order) is this same write done before: a resend after its reply was lost
-- (ioredis sends a command again when the connection dropped before the reply came), or the same
-- task enqueued again, so it is a success and nothing is written again. A different message under
-- the id is still a conflict, and a lock held for a different message still a duplicate.
-- Returns the script's reply: 1 written (now or by the same write before); 0 or -1 refused as
-- newTaskRefusal says (nothing written).
--- @include "includes/sameTaskMessage.lua"
local function newTaskRefusal(taskKey, lockKey)
  if lockKey and redis.call("EXISTS", lockKey) == 1 then
    return -1
  end
  if redis.call("EXISTS", taskKey) == 1 then
    return 0
  end
  return nil
end
local function takeUniqueLock(lockKey, taskId, lockTtlMs)
  if lockKey then
    redis.call("SET", lockKey, taskId, "PX", lockTtlMs)
  end
end
local function addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, write)
  local refusal = newTaskRefusal(taskKey, lockKey)
  if refusal then
    -- Only a refused write reads the hash: a first write costs what it did before (and equal
    -- bytes, the usual resend, are compared as strings before any decoding).
    if sameTaskMessage(redis.call("HGET", taskKey, "msg"), msg) then
      return 1
    end
    return refusal
  end
  takeUniqueLock(lockKey, taskId, lockTtlMs)
  write()
  return 1
end
