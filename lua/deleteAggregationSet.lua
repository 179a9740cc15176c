-- deleteAggregationSet: after its tasks were aggregated into one, deletes an aggregation set,
-- the task hashes of its members, and its entry in aggregation_sets.
-- KEYS[1] asynq:{q}:g:<group>:<setId>
-- KEYS[2] asynq:{q}:aggregation_sets
-- KEYS[3] asynq:{q}:t:   (task key prefix)
-- ARGV    none
-- Returns: the number of member tasks deleted.
local setKey, aggregationSetsKey, taskKeyPrefix = unpack(KEYS)
local ids = redis.call("ZRANGE", setKey, 0, -1)
for _, id in ipairs(ids) do
  redis.call("DEL", taskKeyPrefix .. id)
end
redis.call("DEL", setKey)
redis.call("ZREM", aggregationSetsKey, setKey)
return #ids
