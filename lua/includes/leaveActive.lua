-- includes/leaveActive.lua: takes a task out of the active list and the lease set, only while it
-- is active under a lease (dequeue adds both at once).
-- Defines leaveActive(activeKey, leaseKey, taskId, leaseCutoff, dropStaleLease)
--   activeKey       asynq:{q}:active
--   leaseKey        asynq:{q}:lease
--   taskId          the task's id
--   leaseCutoff     unix seconds: leave only while the lease score is still <= it (recovery of
--                   an expired lease, so two recoverers never both move a task and a task leased
--                   again meanwhile is left alone); "" when the caller holds the lease
--   dropStaleLease  true: a lease entry whose task is not in the active list is removed (else it
--                   would sit at the head of the expired leases and block recovery behind it)
-- Returns true when the task left active and lease; false when nothing was changed (apart from
-- a stale lease entry dropped).
local function leaveActive(activeKey, leaseKey, taskId, leaseCutoff, dropStaleLease)
  local score = redis.call("ZSCORE", leaseKey, taskId)
  if not score then
    return false
  end
  if leaseCutoff ~= "" and tonumber(score) > tonumber(leaseCutoff) then
    return false
  end
  if redis.call("LREM", activeKey, 0, taskId) == 0 then
    if dropStaleLease then
      redis.call("ZREM", leaseKey, taskId)
    end
    return false
  end
  redis.call("ZREM", leaseKey, taskId)
  return true
end
