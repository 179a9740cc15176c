-- readAggregationSet (read only): the tasks of an aggregation set, oldest first, and its deadline.
-- KEYS[1] asynq:{q}:g:<group>:<setId>
-- KEYS[2] asynq:{q}:aggregation_sets
-- KEYS[3] asynq:{q}:t:   (task key prefix)
-- ARGV    none
-- Returns: {deadline (unix seconds, string) or false when the set is not registered,
--           id1, msg1, id2, msg2, ...} (msg false when the task hash has no msg).
local out = {redis.call("ZSCORE", KEYS[2], KEYS[1])}
local ids = redis.call("ZRANGE", KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  table.insert(out, id)
  table.insert(out, redis.call("HGET", KEYS[3] .. id, "msg"))
end
return out
