-- inspector_runBatch: moves up to ARGV[1] tasks of a zset state (scheduled, retry, archived) or
-- of a group (aggregating) to pending, lowest score first (asynq's RunAll*Tasks, in bounded
-- batches so a huge set never blocks Redis). Each task: LPUSH pending, state "pending",
-- pending_since = now. An emptied group leaves the groups set.
-- KEYS[1] source zset: asynq:{q}:scheduled | retry | archived | asynq:{q}:g:<group>
-- KEYS[2] asynq:{q}:pending
-- KEYS[3] asynq:{q}:t:       (task key prefix)
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] batch size (> 0)
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3] group name when KEYS[1] is a group, else ""
-- Returns {moved, left in the source}.
local ids = redis.call("ZRANGE", KEYS[1], 0, tonumber(ARGV[1]) - 1)
for _, id in ipairs(ids) do
  redis.call("LPUSH", KEYS[2], id)
  redis.call("HSET", KEYS[3] .. id, "state", "pending", "pending_since", ARGV[2])
end
if #ids > 0 then
  redis.call("ZREM", KEYS[1], unpack(ids))
end
local left = redis.call("ZCARD", KEYS[1])
if left == 0 and ARGV[3] ~= "" then
  redis.call("SREM", KEYS[4], ARGV[3])
end
return {#ids, left}
