-- reclaimStaleAggregationSets: aggregation sets whose deadline passed (the aggregating process
-- died) go back into their group with their original scores; the group is listed again in the
-- groups set. At most ARGV[2] sets per call. A registered name outside this queue's group prefix
-- is only unregistered.
-- KEYS[1] asynq:{q}:aggregation_sets
-- KEYS[2] asynq:{q}:g:     (group key prefix; a set key is KEYS[2] .. group .. ":" .. setId)
-- KEYS[3] asynq:{q}:groups
-- ARGV[1] now, unix seconds
-- ARGV[2] maximum number of sets (>= 1)
-- Returns: {sets reclaimed, tasks put back}
local aggregationSetsKey, groupKeyPrefix, groupsKey = unpack(KEYS)
local now, maxSets = unpack(ARGV)
maxSets = tonumber(maxSets)
local sets, tasks = 0, 0
local stale = redis.call("ZRANGEBYSCORE", aggregationSetsKey, "-inf", now, "LIMIT", 0, maxSets)
for _, setKey in ipairs(stale) do
  redis.call("ZREM", aggregationSetsKey, setKey)
  local idx = string.find(setKey, ":[^:]*$")
  if string.sub(setKey, 1, #groupKeyPrefix) == groupKeyPrefix and idx and idx > #groupKeyPrefix + 1 then
    local groupKey = string.sub(setKey, 1, idx - 1)
    local res = redis.call("ZRANGE", setKey, 0, -1, "WITHSCORES")
    for i = 1, #res, 2 do
      redis.call("ZADD", groupKey, res[i + 1], res[i])
    end
    if #res > 0 then
      redis.call("SADD", groupsKey, string.sub(groupKey, #groupKeyPrefix + 1))
    end
    redis.call("DEL", setKey)
    sets = sets + 1
    tasks = tasks + #res / 2
  end
end
return {sets, tasks}
