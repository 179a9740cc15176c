-- checkGroups: when a group is ready, moves up to ARGV[1] of its oldest tasks (all when
-- ARGV[1] = 0) into a new aggregation set, registered in aggregation_sets with a deadline.
-- Ready means (checked in this order): the group holds >= ARGV[1] tasks (ARGV[1] > 0); or its
-- oldest task was added at or before now - ARGV[2] (ARGV[2] > 0); or its newest task was added at
-- or before now - ARGV[3] (grace period). A group left empty leaves the groups set.
-- KEYS[1] asynq:{q}:g:<group>
-- KEYS[2] asynq:{q}:g:<group>:<setId>
-- KEYS[3] asynq:{q}:aggregation_sets
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] max group size (0 = no limit)
-- ARGV[2] max delay, seconds (0 = none)
-- ARGV[3] grace period, seconds
-- ARGV[4] aggregation set deadline, unix seconds
-- ARGV[5] now, unix seconds
-- ARGV[6] group name
-- Returns: the number of tasks moved into the set (0 = not ready, no set created).
local groupKey, setKey, aggregationSetsKey, groupsKey = unpack(KEYS)
local maxSize, maxDelay, gracePeriod, setDeadline, now, groupName = unpack(ARGV)
maxSize = tonumber(maxSize)
maxDelay = tonumber(maxDelay)
gracePeriod = tonumber(gracePeriod)
now = tonumber(now)
local size = redis.call("ZCARD", groupKey)
if size == 0 then
  redis.call("SREM", groupsKey, groupName)
  return 0
end
local ready = false
if maxSize > 0 and size >= maxSize then
  ready = true
end
if not ready and maxDelay > 0 then
  local oldest = redis.call("ZRANGE", groupKey, 0, 0, "WITHSCORES")
  if tonumber(oldest[2]) <= now - maxDelay then
    ready = true
  end
end
if not ready then
  local newest = redis.call("ZRANGE", groupKey, -1, -1, "WITHSCORES")
  if tonumber(newest[2]) <= now - gracePeriod then
    ready = true
  end
end
if not ready then
  return 0
end
local last = -1
if maxSize > 0 then
  last = maxSize - 1
end
local res = redis.call("ZRANGE", groupKey, 0, last, "WITHSCORES")
for i = 1, #res, 2 do
  redis.call("ZADD", setKey, res[i + 1], res[i])
end
redis.call("ZREMRANGEBYRANK", groupKey, 0, last)
redis.call("ZADD", aggregationSetsKey, setDeadline, setKey)
if redis.call("ZCARD", groupKey) == 0 then
  redis.call("SREM", groupsKey, groupName)
end
return #res / 2
