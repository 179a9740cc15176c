-- listLeaseExpired (read only): tasks whose lease expired at or before a cutoff, oldest first.
-- KEYS[1] asynq:{q}:lease
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- ARGV[1] cutoff, unix seconds
-- ARGV[2] maximum number of tasks (>= 1)
-- Returns: a flat array id1, msg1, ... (msg false when the task hash has no msg).
local leaseKey, taskKeyPrefix = unpack(KEYS)
local cutoff, maxTasks = unpack(ARGV)
maxTasks = tonumber(maxTasks)
local out = {}
local ids = redis.call("ZRANGEBYSCORE", leaseKey, "-inf", cutoff, "LIMIT", 0, maxTasks)
for _, id in ipairs(ids) do
  table.insert(out, id)
  table.insert(out, redis.call("HGET", taskKeyPrefix .. id, "msg"))
end
return out
