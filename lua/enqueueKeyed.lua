-- enqueueKeyed: a new task with a limit key -> waiting for its key (not asynq's; per-key limits and
-- fair tenants, includes/keyLimits.lua). The task is written as an asynq scheduled task (hash
-- state "scheduled", no pending_since, and limit_key, which lua/forward.lua reads to bring a retry
-- of the task back to its key; its id in the scheduled zset under the sentinel score
-- 253402300799, 9999-12-31T23:59:59Z, which no forwarder reaches, so asynq's tools show it as
-- scheduled and Go servers never take it), its id is LPUSHed on the key's list, and the key joins
-- the queue's ring of keys with waiting tasks (ZADD NX: a key already there keeps its place). When
-- the key joins the ring the queue name is published on "effect-asynq:wake", so idle workers look.
-- The lease (includes/leaseTasks.lua) moves it to active when its key has room. With a uniqueness
-- lock key (KEYS[5]) the lock is taken in the same step. Checks come first and nothing is written
-- unless every check passes (includes/newTask.lua).
--
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2]  scheduled zset               asynq:{<q>}:scheduled
-- KEYS[3]  the key's waiting list       asynq:{<q>}:lk:<limit key>
-- KEYS[4]  the ring of keys             asynq:{<q>}:lkeys
-- KEYS[5]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  task id
-- ARGV[2]  encoded TaskMessage (protobuf bytes)
-- ARGV[3]  now, unix ms (the key's place in the ring when it joins it)
-- ARGV[4]  queue name (the wake message)
-- ARGV[5]  the limit key
-- ARGV[6]  (with KEYS[5]) lock TTL in milliseconds (>= 1)
--
-- Returns  1  written (waiting for its key); also when the task hash already holds this same
--             message (the same write sent again after its reply was lost): nothing written twice
--          0  a different task with this id already exists in the queue (nothing written)
--         -1  the uniqueness lock is held by another task (nothing written)
--- @include "includes/newTask.lua"
local taskKeyPrefix, scheduledKey, listKey, ringKey, lockKey = unpack(KEYS)
local taskId, msg, nowMs, queueName, limitKey, lockTtlMs = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
return addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "limit_key", limitKey, "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "scheduled", "limit_key", limitKey)
  end
  redis.call("ZADD", scheduledKey, 253402300799, taskId)
  redis.call("LPUSH", listKey, taskId)
  if redis.call("ZADD", ringKey, "NX", nowMs, limitKey) == 1 then
    redis.call("PUBLISH", "effect-asynq:wake", queueName)
  end
end)
