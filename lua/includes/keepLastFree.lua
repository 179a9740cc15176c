-- includes/keepLastFree.lua: a keep-last key's current task finished (lua/keepLastRelease.lua, sent
-- by the worker that settled it; and the scripts that archive or delete a task carrying the hash
-- field "keep_last": lua/archive.lua, lua/inspector_archiveTask.lua, lua/inspector_deleteTask.lua,
-- not the bulk actions, which leave a waiting task to its latest start). Its waiting task, if any, moves
-- from scheduled to pending (hash state "pending" with pending_since, id LPUSHed on the pending
-- list, a wake-up when the list was empty) and becomes the key's current task; with none waiting
-- the key is deleted (the key is free) and leaves the queue's index of per-key keys
-- (asynq:{q}:keyindex, "k:<key>"). Nothing is done unless the key names this task as current and
-- the task has finished (its hash gone, completed or archived): a task retried keeps the key, and
-- a resend after a lost reply finds the key moved on. A waiting task that finished first (its
-- latest start came) is cleared from the key.
-- Defines keepLastFree(queuePrefix, keyName, finishedId, pendingSince, queueName)
--   queuePrefix   asynq:{q}:  (the keep-last key is queuePrefix .. "keeplast:" .. keyName)
--   keyName       the keep-last key as given at enqueue
--   finishedId    the finished task's id
--   pendingSince  pending_since for the released task: unix time in nanoseconds (decimal string)
--   queueName     the queue's name (the wake-up message)
-- Returns 2 the waiting task was released (pending now, the key's current task); 1 the key is
-- free or moved to a waiting task already released; 0 nothing to do.
local function keepLastFree(queuePrefix, keyName, finishedId, pendingSince, queueName)
  local taskKeyPrefix = queuePrefix .. "t:"
  local pendingKey = queuePrefix .. "pending"
  local keepKey = queuePrefix .. "keeplast:" .. keyName
  local function free()
    redis.call("DEL", keepKey)
    redis.call("SREM", queuePrefix .. "keyindex", "k:" .. keyName)
  end
  local held = redis.call("HMGET", keepKey, "current", "waiting")
  local current, waiting = held[1], held[2]
  if keepLastUnfinished(keepLastStateOf(taskKeyPrefix, finishedId)) then
    return 0
  end
  if waiting and waiting == finishedId then
    redis.call("HDEL", keepKey, "waiting")
    if not keepLastUnfinished(keepLastStateOf(taskKeyPrefix, current)) then
      free()
    end
    return 1
  end
  if not current or current ~= finishedId then
    return 0
  end
  if waiting then
    local state = keepLastStateOf(taskKeyPrefix, waiting)
    if state == "scheduled" then
      local waitingKey = taskKeyPrefix .. waiting
      redis.call("ZREM", queuePrefix .. "scheduled", waiting)
      redis.call("ZREM", queuePrefix .. "due_ms", waiting)
      redis.call("HSET", waitingKey, "state", "pending", "pending_since", pendingSince)
      if redis.call("LPUSH", pendingKey, waiting) == 1 then
        redis.call("PUBLISH", "effect-asynq:wake", queueName)
      end
      redis.call("HSET", keepKey, "current", waiting)
      redis.call("HDEL", keepKey, "waiting")
      return 2
    end
    if keepLastUnfinished(state) then
      redis.call("HSET", keepKey, "current", waiting)
      redis.call("HDEL", keepKey, "waiting")
      return 1
    end
  end
  free()
  return 1
end
