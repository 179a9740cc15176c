-- includes/writeKeyedTask.lua: writes a new task with a limit key as waiting for its key (not
-- asynq's; per-key limits and fair tenants, includes/keyLimits.lua): an asynq scheduled task (hash
-- msg, state "scheduled", limit_key, which lua/forward.lua reads to bring a retry of the task back
-- to its key, and unique_key when it holds a lock; no pending_since), its id in the scheduled zset
-- under the sentinel score 253402300799 (the last second of the year 9999), which no forwarder
-- reaches (ours and Go's forward score <= now), so asynq's tools show it as scheduled and Go
-- servers never take it; its id LPUSHed on the key's list asynq:{q}:lk:<limit key>, and the key
-- added to the ring asynq:{q}:lkeys (ZADD NX: a key already there keeps its place). When the key
-- joins the ring the queue name is published on "effect-asynq:wake", so idle workers look, and
-- "l:<limit key>" is added to the queue's index of per-key keys asynq:{q}:keyindex (a set the
-- queue's deletion walks: lua/inspector_deleteQueue.lua).
-- Defines writeKeyedTask(queuePrefix, taskKey, taskId, msg, lockKey, limitKey, nowMs, queueName)
--   queuePrefix  asynq:{q}:
--   taskKey      asynq:{q}:t:<id>
--   taskId       the task's id
--   msg          encoded TaskMessage
--   lockKey      the uniqueness lock the task holds, or nil
--   limitKey     the task's limit key
--   nowMs        now, unix ms (the key's place in the ring when it joins it)
--   queueName    the queue's name (the wake message)
-- Returns nothing.
local function writeKeyedTask(queuePrefix, taskKey, taskId, msg, lockKey, limitKey, nowMs, queueName)
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "limit_key", limitKey, "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "limit_key", limitKey)
  end
  redis.call("ZADD", queuePrefix .. "scheduled", 253402300799, taskId)
  redis.call("LPUSH", queuePrefix .. "lk:" .. limitKey, taskId)
  if redis.call("ZADD", queuePrefix .. "lkeys", "NX", nowMs, limitKey) == 1 then
    redis.call("SADD", queuePrefix .. "keyindex", "l:" .. limitKey)
    redis.call("PUBLISH", "effect-asynq:wake", queueName)
  end
end
