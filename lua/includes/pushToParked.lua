-- includes/pushToParked.lua: hands a new task straight to an idle effect-asynq worker instead of
-- the pending list, saving that worker the dequeue round trip. A worker whose dequeue came back
-- short left a park token in asynq:{q}:parked (field: its server id, value: a lease score unique to
-- that park, see lua/dequeueLease.lua). Only when the queue has no pending task (FIFO order is
-- kept) and is not paused: one token is taken (HDEL, one task per token) and the task is written
-- as a dequeue would leave it (state "active", in active, leased under the token's score), then
-- published on "effect-asynq:push:<server id>" as
--   <token> "\n" <byte length of queue> "\n" <queue> <byte length of id> "\n" <id> <msg>
-- When no connection hears it (PUBLISH returns 0: that worker is gone), the next token is tried;
-- when none is left the lease and active entries are undone and the caller writes the task as
-- pending. A message lost after PUBLISH counted it is given back by the worker (releaseLeases under
-- the token's score) or, failing that, by the recoverer once the lease runs out.
-- All keys are derived from the pending key, inside the queue's {q} slot.
-- Defines pushToParked(pendingKey, taskKey, taskId, msg, lockKey, queueName)
--   pendingKey  asynq:{q}:pending (must end in "pending")
--   taskKey     asynq:{q}:t:<id>
--   taskId      the task's id
--   msg         encoded TaskMessage
--   lockKey     the uniqueness lock the task holds, or nil
--   queueName   the queue's name
-- Returns true when a worker took the task, false when the caller should write it as pending
-- (nothing of the task is written then, except the hash fields the pending write overwrites).
local function pushToParked(pendingKey, taskKey, taskId, msg, lockKey, queueName)
  if redis.call("LLEN", pendingKey) > 0 then
    return false
  end
  local base = string.sub(pendingKey, 1, -8)
  local parkedKey = base .. "parked"
  local parked = redis.call("HGETALL", parkedKey)
  if #parked == 0 or redis.call("EXISTS", base .. "paused") == 1 then
    return false
  end
  local activeKey, leaseKey = base .. "active", base .. "lease"
  if lockKey then
    redis.call("HSET", taskKey, "msg", msg, "state", "active", "unique_key", lockKey)
  else
    redis.call("HSET", taskKey, "msg", msg, "state", "active")
  end
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
  return false
end
