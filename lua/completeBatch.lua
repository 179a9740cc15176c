-- completeBatch: complete (lua/complete.lua) for several tasks of one queue in one call: each task
-- active -> deleted ("delete") or active -> completed ("keep", kept for its retention), only while
-- it is active under a lease; its uniqueness lock released while it still holds the task's id. The
-- tasks done are counted once for the batch (includes/countDoneBatch.lua: same keys, expiry and
-- totals as one count per task). Commands: ZMSCORE, ZREM, DEL and two INCRBY for the batch, plus
-- one LREM per task (and what a kept task or a lock needs).
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:completed
-- KEYS[4] asynq:{q}:t:                    (task key prefix)
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd> (UTC date of now)
-- KEYS[6] asynq:{q}:processed
-- KEYS[7..] asynq:{q}:unique:<...>        (the tasks' uniqueness locks, referred to by index)
-- ARGV[1] daily stat key expiry, unix seconds
-- ARGV[2..] five entries per task: task id, "delete" | "keep", completed zset score (unix
--         seconds; "keep" only), encoded TaskMessage with completed_at set ("keep" only), index
--         in KEYS of the task's uniqueness lock (0: none)
-- Returns: an array with one entry per task, in order: 1 done; 0 the task is not active under a
-- lease (nothing was changed for it).
--- @include "includes/countDoneBatch.lua"
--- @include "includes/releaseUniqueLock.lua"
local activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey = unpack(KEYS)
local statExpireAt = unpack(ARGV)
local count = (#ARGV - 1) / 5
local ids = {}
for t = 1, count do
  ids[t] = ARGV[t * 5 - 3]
end
local scores = redis.call("ZMSCORE", leaseKey, unpack(ids))
local results = {}
local left = {}
local deleted = {}
local done = 0
for t = 1, count do
  local id = ids[t]
  results[t] = 0
  if scores[t] and redis.call("LREM", activeKey, 0, id) > 0 then
    results[t] = 1
    done = done + 1
    table.insert(left, id)
    local at = t * 5 - 3
    local taskKey = taskKeyPrefix .. id
    if ARGV[at + 1] == "keep" then
      redis.call("ZADD", completedKey, ARGV[at + 2], id)
      redis.call("HSET", taskKey, "msg", ARGV[at + 3], "state", "completed")
    else
      table.insert(deleted, taskKey)
    end
    local lockIndex = tonumber(ARGV[at + 4])
    if lockIndex > 0 then
      releaseUniqueLock(KEYS[lockIndex], id, nil)
    end
  end
end
if done > 0 then
  redis.call("ZREM", leaseKey, unpack(left))
  if #deleted > 0 then
    redis.call("DEL", unpack(deleted))
  end
  countDoneBatch(statExpireAt, processedDayKey, processedTotalKey, done)
end
return results
