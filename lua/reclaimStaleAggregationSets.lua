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
local sets, tasks = 0, 0
local prefix = KEYS[2]
local stale = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
for _, setKey in ipairs(stale) do
  redis.call("ZREM", KEYS[1], setKey)
  local idx = string.find(setKey, ":[^:]*$")
  if string.sub(setKey, 1, #prefix) == prefix and idx and idx > #prefix + 1 then
    local groupKey = string.sub(setKey, 1, idx - 1)
    local res = redis.call("ZRANGE", setKey, 0, -1, "WITHSCORES")
    for i = 1, #res, 2 do
      redis.call("ZADD", groupKey, res[i + 1], res[i])
    end
    if #res > 0 then
      redis.call("SADD", KEYS[3], string.sub(groupKey, #prefix + 1))
    end
    redis.call("DEL", setKey)
    sets = sets + 1
    tasks = tasks + #res / 2
  end
end
return {sets, tasks}
