-- listLeaseExpired (read only): tasks whose lease expired at or before a cutoff, oldest first.
-- KEYS[1] asynq:{q}:lease
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- ARGV[1] cutoff, unix seconds
-- ARGV[2] maximum number of tasks (>= 1)
-- Returns: a flat array id1, msg1, ... (msg false when the task hash has no msg).
local out = {}
local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  table.insert(out, id)
  table.insert(out, redis.call("HGET", KEYS[2] .. id, "msg"))
end
return out
