-- readAggregationSet (read only): the tasks of an aggregation set, oldest first, and its deadline.
-- KEYS[1] asynq:{q}:g:<group>:<setId>
-- KEYS[2] asynq:{q}:aggregation_sets
-- KEYS[3] asynq:{q}:t:   (task key prefix)
-- ARGV    none
-- Returns: {deadline (unix seconds, string) or false when the set is not registered,
--           id1, msg1, id2, msg2, ...} (msg false when the task hash has no msg).
local setKey, aggregationSetsKey, taskKeyPrefix = unpack(KEYS)
local out = {redis.call("ZSCORE", aggregationSetsKey, setKey)}
local ids = redis.call("ZRANGE", setKey, 0, -1)
for _, id in ipairs(ids) do
  table.insert(out, id)
  table.insert(out, redis.call("HGET", taskKeyPrefix .. id, "msg"))
end
return out
