-- includes/leaseTasks.lua: pending -> active under a lease, for up to maxTasks tasks of one queue
-- (nothing when the queue is paused), with a fixed number of commands per batch plus three per
-- task: one RPOP (count) and one LPUSH move the ids (RPOPLPUSH for a single task: the same order
-- in active), then HGET msg, HSET state "active", HDEL pending_since per task, and one ZADD puts
-- every leased id in the lease set. A popped id whose task hash has no msg (dangling id) is
-- removed from active again and given with msg false, so the caller can report it.
-- A queue with a flow-control limit (asynq:{q}:flow, derived from the paused key: same slot) leases
-- no more than the limit allows now (includes/flowLimit.lua). An unlimited queue pays nothing for
-- it: the paused check is one EXISTS of both keys, as it was one EXISTS of the paused key.
-- Ids mode (idsOnly true; src/broker/leaseByIds.ts): no msg is read (HEXISTS instead of HGET, so a
-- large message is not copied into Lua and into the reply); out gets the ids alone (dangling ones
-- too, in the same order), and every popped id is also appended to the list asynq:{q}:leasing
-- (derived from taskKeyPrefix: same slot) for a SORT ... BY nosort GET asynq:{q}:t:*->msg that
-- follows in the same MULTI and reads the messages (nil for a dangling id), then DELs the list.
-- Defines leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, maxTasks, out, nowMs, idsOnly)
--   pendingKey     asynq:{q}:pending
--   pausedKey      asynq:{q}:paused
--   activeKey      asynq:{q}:active
--   leaseKey       asynq:{q}:lease
--   taskKeyPrefix  asynq:{q}:t:   (task keys are taskKeyPrefix .. id)
--   leaseExpiry    lease expiry, unix seconds (the lease zset score)
--   maxTasks       most tasks to take (a number >= 1)
--   out            a table the pairs id, msg (false for a dangling id) are appended to (ids mode: the ids)
--   nowMs          now, unix ms (the flow limit's clock)
--   idsOnly        true for ids mode (above)
-- Returns nil, or when a flow limit cut the lease short, the wait until the next task is allowed
-- (flowCharge in includes/flowLimit.lua: ms >= 0 for the rate, -1 for the concurrency cap).
-- A queue with keyed tasks waiting (asynq:{q}:lkeys, derived from the paused key too, and looked
-- for in the same EXISTS) takes its tasks from the keys' ring and pending, round robin
-- (includes/keyLimits.lua); the wait it returns when keys hold tasks back is given when no flow
-- limit cut the lease. Neither costs an unlimited queue anything (the one EXISTS names three keys
-- instead of two), nor a limited one without keyed tasks (its second EXISTS, of the paused key,
-- also names the ring).
--- @include "includes/flowLimit.lua"
--- @include "includes/keyLimits.lua"
local function leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, maxTasks, out, nowMs, idsOnly)
  local queuePrefix = string.sub(pausedKey, 1, -7)
  local flowKey = queuePrefix .. "flow"
  local limit, keyWait
  local ids
  local ringKey = queuePrefix .. "lkeys"
  local found = redis.call("EXISTS", pausedKey, flowKey, ringKey)
  if found > 0 then
    -- One EXISTS tells both apart (EXISTS counts a key named twice twice): 2 * paused + ring.
    local pausedAndRing = redis.call("EXISTS", pausedKey, pausedKey, ringKey)
    if pausedAndRing >= 2 then
      return
    end
    if found > pausedAndRing then
      limit = flowAllowance(flowKey, activeKey, tonumber(nowMs), maxTasks)
      maxTasks = limit.allowed
      if maxTasks == 0 then
        return flowCharge(flowKey, limit, 0)
      end
    end
    if pausedAndRing == 1 then
      ids, keyWait = leaseFromKeys(queuePrefix, flowKey, pendingKey, maxTasks, tonumber(nowMs))
      if #ids == 0 then
        return (limit and flowCharge(flowKey, limit, 0)) or keyWait
      end
      for i = 1, #ids, 1000 do
        redis.call("LPUSH", activeKey, unpack(ids, i, math.min(i + 999, #ids)))
      end
    end
  end
  if ids then
    -- taken from the keys' ring and pending (above)
  elseif maxTasks == 1 then
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
    local msg
    if idsOnly then
      msg = redis.call("HEXISTS", taskKey, "msg") == 1
    else
      msg = redis.call("HGET", taskKey, "msg")
    end
    if msg then
      redis.call("HSET", taskKey, "state", "active")
      redis.call("HDEL", taskKey, "pending_since")
      table.insert(leased, leaseExpiry)
      table.insert(leased, id)
    else
      redis.call("LREM", activeKey, 1, id)
    end
    table.insert(out, id)
    if not idsOnly then
      table.insert(out, msg)
    end
  end
  if idsOnly then
    local listKey = string.sub(taskKeyPrefix, 1, -3) .. "leasing"
    for i = 1, #ids, 1000 do
      redis.call("RPUSH", listKey, unpack(ids, i, math.min(i + 999, #ids)))
    end
  end
  for i = 1, #leased, 2000 do
    redis.call("ZADD", leaseKey, unpack(leased, i, math.min(i + 1999, #leased)))
  end
  if limit then
    return flowCharge(flowKey, limit, #leased / 2) or keyWait
  end
  return keyWait
end
