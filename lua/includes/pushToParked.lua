-- includes/pushToParked.lua: hands a new task straight to an idle effect-asynq worker instead of
-- the pending list, saving that worker the dequeue round trip. A worker whose dequeue came back
-- short left a park token in asynq:{q}:parked (field: its server id, value: a lease score unique to
-- that park, see lua/dequeueLease.lua). Only when the queue has no pending task (FIFO order is
-- kept) and is not paused: one token is taken (HDEL, one task per token) and the task is written
-- as a dequeue would leave it (state "active", in active, leased under the token's score), then
-- published on "effect-asynq:push:<server id>" as
--   <token> "\n" <byte length of queue> "\n" <queue> <byte length of id> "\n" <id> <msg>
-- When no connection hears it (PUBLISH returns 0: that worker is gone), the next token is tried;
-- when none is left the task is put back as it was written (pending). A message lost after
-- PUBLISH counted it is given back by the worker (releaseLeases under the token's score) or,
-- failing that, by the recoverer once the lease runs out.
-- Called right after the task was written as pending and its LPUSH made the pending list non-empty
-- (so a busy queue costs nothing here, and FIFO order holds: nothing was pending before it).
-- All keys are derived from the pending key, inside the queue's {q} slot.
-- Defines pushToParked(pendingKey, taskKey, taskId, msg, pendingSince, queueName)
--   pendingKey    asynq:{q}:pending (must end in "pending"; holds only taskId)
--   taskKey       asynq:{q}:t:<id>, written as pending
--   taskId        the task's id
--   msg           encoded TaskMessage
--   pendingSince  the task's pending_since (restored when nobody took it)
--   queueName     the queue's name
-- Returns true when a worker took the task; false when it is pending, exactly as written before.
local function pushToParked(pendingKey, taskKey, taskId, msg, pendingSince, queueName)
  local base = string.sub(pendingKey, 1, -8)
  local parkedKey = base .. "parked"
  local parked = redis.call("HGETALL", parkedKey)
  if #parked == 0 or redis.call("EXISTS", base .. "paused") == 1 then
    return false
  end
  local activeKey, leaseKey = base .. "active", base .. "lease"
  redis.call("LPOP", pendingKey)
  redis.call("HSET", taskKey, "state", "active")
  redis.call("HDEL", taskKey, "pending_since")
  redis.call("LPUSH", activeKey, taskId)
  for i = 1, #parked, 2 do
    local server, token = parked[i], parked[i + 1]
    redis.call("HDEL", parkedKey, server)
    redis.call("ZADD", leaseKey, token, taskId)
    local message = token .. "\n" .. #queueName .. "\n" .. queueName .. #taskId .. "\n" .. taskId .. msg
    if redis.call("PUBLISH", "effect-asynq:push:" .. server, message) > 0 then
      return true
    end
  end
  redis.call("ZREM", leaseKey, taskId)
  redis.call("LPOP", activeKey)
  redis.call("LPUSH", pendingKey, taskId)
  redis.call("HSET", taskKey, "state", "pending", "pending_since", pendingSince)
  return false
end
