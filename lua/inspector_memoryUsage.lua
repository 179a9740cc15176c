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
local sample = tonumber(ARGV[1])
local function usage(key)
  return redis.call("MEMORY", "USAGE", key) or 0
end
local total = 0
local function estimate(ids, size, key)
  if #ids > 0 then
    local sum = 0
    for _, id in ipairs(ids) do
      sum = sum + usage(KEYS[8] .. id)
    end
    total = total + (sum / #ids) * size
  end
  total = total + usage(key)
end
for i = 1, 2 do
  estimate(redis.call("LRANGE", KEYS[i], 0, sample - 1), redis.call("LLEN", KEYS[i]), KEYS[i])
end
for i = 3, 6 do
  estimate(redis.call("ZRANGE", KEYS[i], 0, sample - 1), redis.call("ZCARD", KEYS[i]), KEYS[i])
end
local groups = redis.call("SMEMBERS", KEYS[7])
local count, sampled, sum = 0, 0, 0
for i, g in ipairs(groups) do
  local gkey = KEYS[9] .. g
  count = count + redis.call("ZCARD", gkey)
  if i <= tonumber(ARGV[2]) then
    for _, id in ipairs(redis.call("ZRANGE", gkey, 0, sample - 1)) do
      sum = sum + usage(KEYS[8] .. id)
      sampled = sampled + 1
    end
  end
end
if sampled > 0 then
  total = total + (sum / sampled) * count
end
return math.floor(total)
