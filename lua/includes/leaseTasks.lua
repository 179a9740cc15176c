-- includes/leaseTasks.lua: pending -> active under a lease, for up to maxTasks tasks of one queue
-- (nothing when the queue is paused), with a fixed number of commands per batch plus three per
-- task: one RPOP (count) and one LPUSH move the ids (RPOPLPUSH for a single task: the same order
-- in active), then HGET msg, HSET state "active", HDEL pending_since per task, and one ZADD puts
-- every leased id in the lease set. A popped id whose task hash has no msg (dangling id) is
-- removed from active again and given with msg false, so the caller can report it.
-- Defines leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, maxTasks, out)
--   pendingKey     asynq:{q}:pending
--   pausedKey      asynq:{q}:paused
--   activeKey      asynq:{q}:active
--   leaseKey       asynq:{q}:lease
--   taskKeyPrefix  asynq:{q}:t:   (task keys are taskKeyPrefix .. id)
--   leaseExpiry    lease expiry, unix seconds (the lease zset score)
--   maxTasks       most tasks to take (a number >= 1)
--   out            a table the pairs id, msg (false for a dangling id) are appended to
-- Returns nothing.
local function leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, maxTasks, out)
  if redis.call("EXISTS", pausedKey) == 1 then
    return
  end
  local ids
  if maxTasks == 1 then
    local id = redis.call("RPOPLPUSH", pendingKey, activeKey)
    if not id then
      return
    end
    ids = { id }
  else
    ids = redis.call("RPOP", pendingKey, maxTasks)
    if not ids then
      return
    end
    for i = 1, #ids, 1000 do
      redis.call("LPUSH", activeKey, unpack(ids, i, math.min(i + 999, #ids)))
    end
  end
  local leased = {}
  for _, id in ipairs(ids) do
    local taskKey = taskKeyPrefix .. id
    local msg = redis.call("HGET", taskKey, "msg")
    if msg then
      redis.call("HSET", taskKey, "state", "active")
      redis.call("HDEL", taskKey, "pending_since")
      table.insert(leased, leaseExpiry)
      table.insert(leased, id)
    else
      redis.call("LREM", activeKey, 1, id)
    end
    table.insert(out, id)
    table.insert(out, msg)
  end
  for i = 1, #leased, 2000 do
    redis.call("ZADD", leaseKey, unpack(leased, i, math.min(i + 1999, #leased)))
  end
end
