-- includes/completeTasks.lua: complete (lua/complete.lua) for several tasks of one queue: each task
-- active -> deleted ("delete") or active -> completed ("keep", kept for its retention), only while
-- it is active under a lease; its uniqueness lock released while it still holds the task's id. The
-- tasks done are counted once (includes/countDoneBatch.lua: same keys, expiry and totals as one
-- count per task). Commands: ZMSCORE, ZREM, DEL and two INCRBY for the batch, plus one LREM per
-- task (and what a kept task or a lock needs).
--- @include "includes/countDoneBatch.lua"
--- @include "includes/releaseUniqueLock.lua"
-- Defines completeTasks(activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey, statExpireAt, entries, first, lockKeys)
--   activeKey .. processedTotalKey  the queue's keys, as complete.lua's KEYS[1..6]
--   statExpireAt  unix seconds: expiry of a daily stat key created now
--   entries       a table holding five entries per task from index `first` to its end: task id,
--                 "delete" | "keep", completed zset score ("keep" only), encoded TaskMessage with
--                 completed_at set ("keep" only), index in lockKeys of the task's uniqueness lock
--                 (0: none)
--   lockKeys      a table of the uniqueness lock keys (indexed as the entries say)
-- Returns an array with one entry per task, in order: 1 done; 2 already done (not active, and
-- completed ("keep") or gone ("delete"): a resend of a call whose reply was lost, as complete.lua;
-- nothing is written or counted again); 0 the task is not active under a lease and not finished
-- either (nothing was changed for it). The "already done" check runs only for a task not active.
local function completeTasks(activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey, statExpireAt, entries, first, lockKeys)
  local count = (#entries - first + 1) / 5
  local ids = {}
  for t = 1, count do
    ids[t] = entries[first + (t - 1) * 5]
  end
  local scores = redis.call("ZMSCORE", leaseKey, unpack(ids))
  local results = {}
  local left = {}
  local deleted = {}
  for t = 1, count do
    local id = ids[t]
    results[t] = 0
    local at = first + (t - 1) * 5
    if scores[t] and redis.call("LREM", activeKey, 0, id) > 0 then
      results[t] = 1
      table.insert(left, id)
      local taskKey = taskKeyPrefix .. id
      if entries[at + 1] == "keep" then
        redis.call("ZADD", completedKey, entries[at + 2], id)
        redis.call("HSET", taskKey, "msg", entries[at + 3], "state", "completed")
      else
        table.insert(deleted, taskKey)
      end
      local lockIndex = tonumber(entries[at + 4])
      if lockIndex > 0 then
        releaseUniqueLock(lockKeys[lockIndex], id, nil)
      end
    elseif entries[at + 1] == "keep" then
      if redis.call("HGET", taskKeyPrefix .. id, "state") == "completed" and redis.call("ZSCORE", completedKey, id) then
        results[t] = 2
      end
    elseif redis.call("EXISTS", taskKeyPrefix .. id) == 0 then
      results[t] = 2
    end
  end
  if #left > 0 then
    redis.call("ZREM", leaseKey, unpack(left))
    if #deleted > 0 then
      redis.call("DEL", unpack(deleted))
    end
    countDoneBatch(statExpireAt, processedDayKey, processedTotalKey, #left)
  end
  return results
end
