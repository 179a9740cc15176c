-- inspector_memoryUsage: approximate bytes a queue takes in Redis (asynq's sampling method): for
-- each list/zset, MEMORY USAGE of up to ARGV[1] task hashes, averaged and multiplied by the
-- structure's size, plus the structure itself; groups: the first ARGV[2] groups are sampled.
-- Read-only.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:pending
-- KEYS[3] asynq:{q}:scheduled
-- KEYS[4] asynq:{q}:retry
-- KEYS[5] asynq:{q}:archived
-- KEYS[6] asynq:{q}:completed
-- KEYS[7] asynq:{q}:groups
-- KEYS[8] asynq:{q}:t:   (task key prefix)
-- KEYS[9] asynq:{q}:g:   (group key prefix)
-- ARGV[1] task sample size per structure (> 0)
-- ARGV[2] number of groups sampled
-- Returns the estimate in bytes (integer).
local activeKey, pendingKey, scheduledKey, retryKey, archivedKey, completedKey,
  groupsKey, taskKeyPrefix, groupKeyPrefix = unpack(KEYS)
local sample, groupsSampled = unpack(ARGV)
sample = tonumber(sample)
groupsSampled = tonumber(groupsSampled)
local function usage(key)
  return redis.call("MEMORY", "USAGE", key) or 0
end
local total = 0
local function estimate(ids, size, key)
  if #ids > 0 then
    local sum = 0
    for _, id in ipairs(ids) do
      sum = sum + usage(taskKeyPrefix .. id)
    end
    total = total + (sum / #ids) * size
  end
  total = total + usage(key)
end
for _, key in ipairs({activeKey, pendingKey}) do
  estimate(redis.call("LRANGE", key, 0, sample - 1), redis.call("LLEN", key), key)
end
for _, key in ipairs({scheduledKey, retryKey, archivedKey, completedKey}) do
  estimate(redis.call("ZRANGE", key, 0, sample - 1), redis.call("ZCARD", key), key)
end
local groups = redis.call("SMEMBERS", groupsKey)
local count, sampled, sum = 0, 0, 0
for i, g in ipairs(groups) do
  local groupKey = groupKeyPrefix .. g
  count = count + redis.call("ZCARD", groupKey)
  if i <= groupsSampled then
    for _, id in ipairs(redis.call("ZRANGE", groupKey, 0, sample - 1)) do
      sum = sum + usage(taskKeyPrefix .. id)
      sampled = sampled + 1
    end
  end
end
if sampled > 0 then
  total = total + (sum / sampled) * count
end
return math.floor(total)
