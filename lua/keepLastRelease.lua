-- keepLastRelease: a keep-last key's current task finished (completed, archived or dropped): its
-- waiting task, if any, moves from scheduled to pending (an ordinary pending task now: hash state
-- "pending" with pending_since, id LPUSHed on the pending list, a wake-up when the list was empty)
-- and becomes the key's current task; with none waiting the key is deleted (the key is free). Sent
-- by the worker that settled the current task (lua/enqueueKeepLast.lua describes the key).
-- Nothing is done unless the key names this task as current and the task has finished (its hash
-- gone, completed or archived): a task retried keeps the key, and a resend of this call after its
-- reply was lost finds the key moved on. A waiting task that finished first (its latest start
-- came) is cleared from the key.
-- KEYS[1] task key prefix   asynq:{<q>}:t:
-- KEYS[2] pending list      asynq:{<q>}:pending
-- KEYS[3] scheduled zset    asynq:{<q>}:scheduled
-- KEYS[4] keep-last key     asynq:{<q>}:keeplast:<key>
-- ARGV[1] the finished task's id
-- ARGV[2] pending_since for the released task: unix time in nanoseconds (decimal string)
-- ARGV[3] queue name (the wake-up message)
-- Returns 2 the waiting task was released (pending now, the key's current task); 1 the key is
-- free or moved to a waiting task already released; 0 nothing to do.
--- @include "includes/keepLastState.lua"
local taskKeyPrefix, pendingKey, scheduledKey, keepKey = unpack(KEYS)
local finishedId, pendingSince, queueName = unpack(ARGV)
local held = redis.call("HMGET", keepKey, "current", "waiting")
local current, waiting = held[1], held[2]
if keepLastUnfinished(keepLastStateOf(taskKeyPrefix, finishedId)) then
  return 0
end
if waiting and waiting == finishedId then
  redis.call("HDEL", keepKey, "waiting")
  if not keepLastUnfinished(keepLastStateOf(taskKeyPrefix, current)) then
    redis.call("DEL", keepKey)
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
    redis.call("ZREM", scheduledKey, waiting)
    redis.call("ZREM", string.sub(scheduledKey, 1, -10) .. "due_ms", waiting)
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
redis.call("DEL", keepKey)
return 1
