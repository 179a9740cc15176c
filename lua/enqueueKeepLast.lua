-- enqueueKeepLast: a new task for a keep-last key (keep-last-while-active: at most one task of the
-- key waits while its current one has not finished; the last enqueue wins). The keep-last key (a
-- hash, not asynq's) names the key's current task (`current`: released to run: pending, active, or
-- waiting for a retry) and its waiting task (`waiting`: scheduled, due at its latest start).
-- Whether the current task has finished is read from its task hash (gone, completed or archived:
-- finished), so a worker that died before releasing the key, or a Go asynq server that ran the
-- task, leaves nothing stuck. A waiting task that is no longer scheduled (its latest start came and
-- a forwarder made it pending, or someone ran it) counts as the current one when there is none.
--   No current task: this task is written as pending and becomes current (a waiting task, left
--   over, is replaced by it).
--   A current task: this task is written as scheduled, due at ARGV[5] (its latest start, should
--   nothing release it sooner: lua/keepLastRelease.lua does when the current one finishes), and
--   replaces the key's waiting task (deleted: hash, scheduled zset, due_ms).
-- Both are ordinary asynq tasks (pending, or scheduled), so every asynq server runs them; their
-- hash also has the field "keep_last" (the key: scripts that archive or delete a task read it to
-- release the key's waiting task, lua/includes/keepLastState.lua). A keep-last key that is new is
-- added ("k:<key>") to the queue's index of per-key keys asynq:{q}:keyindex (derived from KEYS[3]:
-- same slot), which the queue's deletion walks (lua/inspector_deleteQueue.lua).
-- KEYS[1] task key prefix   asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2] pending list      asynq:{<q>}:pending
-- KEYS[3] scheduled zset    asynq:{<q>}:scheduled
-- KEYS[4] keep-last key     asynq:{<q>}:keeplast:<key>
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (protobuf bytes)
-- ARGV[3] pending_since: unix time in nanoseconds (decimal string)
-- ARGV[4] queue name (the wake-up messages)
-- ARGV[5] the waiting task's latest start: now + maxWait, unix ms (decimal string)
-- ARGV[6] the keep-last key's expiry, ms (refreshed by each write)
-- Returns {1, replaced} written as pending (the key's current task); {2, replaced} written as the
-- key's waiting task (scheduled); replaced is 1 when a waiting task was deleted for it, else 0. A
-- resend of this same call (its reply lost) finds its id in the key and answers {1, 0} or {2, 0}
-- again, writing nothing. {0, 0}: a different task with this id already exists (nothing written).
--- @include "includes/writePendingTask.lua"
--- @include "includes/writeScheduledTask.lua"
--- @include "includes/keepLastState.lua"
local taskKeyPrefix, pendingKey, scheduledKey, keepKey = unpack(KEYS)
local taskId, msg, pendingSince, queueName, latestStartMs, keyTtlMs = unpack(ARGV)
local queuePrefix = string.sub(scheduledKey, 1, -10)
local held = redis.call("HMGET", keepKey, "current", "waiting")
local current, waiting = held[1], held[2]
local newKey = not current and not waiting
if current and current == taskId then
  return { 1, 0 }
end
if waiting and waiting == taskId then
  return { 2, 0 }
end
if not keepLastUnfinished(keepLastStateOf(taskKeyPrefix, current)) then
  current = nil
end
if waiting then
  local state = keepLastStateOf(taskKeyPrefix, waiting)
  if state ~= "scheduled" then
    if keepLastUnfinished(state) and not current then
      current = waiting
    end
    waiting = nil
  end
end
local taskKey = taskKeyPrefix .. taskId
if redis.call("EXISTS", taskKey) == 1 then
  return { 0, 0 }
end
local replaced = 0
if waiting then
  redis.call("ZREM", scheduledKey, waiting)
  redis.call("ZREM", queuePrefix .. "due_ms", waiting)
  redis.call("DEL", taskKeyPrefix .. waiting)
  replaced = 1
end
local code
if current then
  writeScheduledTask(taskKey, taskId, msg, latestStartMs, nil, scheduledKey, queueName)
  redis.call("HSET", taskKey, "keep_last", string.sub(keepKey, #queuePrefix + 10))
  redis.call("HSET", keepKey, "current", current, "waiting", taskId)
  code = 2
else
  writePendingTask(taskKey, taskId, msg, pendingSince, nil, pendingKey, queueName)
  redis.call("HSET", taskKey, "keep_last", string.sub(keepKey, #queuePrefix + 10))
  redis.call("HSET", keepKey, "current", taskId)
  redis.call("HDEL", keepKey, "waiting")
  code = 1
end
redis.call("PEXPIRE", keepKey, keyTtlMs)
if newKey then
  redis.call("SADD", queuePrefix .. "keyindex", "k:" .. string.sub(keepKey, #queuePrefix + 10))
end
return { code, replaced }
