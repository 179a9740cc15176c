-- extendLease: moves the lease expiry of held tasks forward (never backward).
-- Only ids still in the lease set are touched (a recovered or finished task is not re-leased).
-- KEYS[1] asynq:{q}:lease
-- ARGV[1] new lease expiry, unix seconds
-- ARGV[2..] task ids
-- Returns: the ids that are still held (in the lease set), in argument order.
local leaseKey = KEYS[1]
local newExpiry = ARGV[1]
local expiry = tonumber(newExpiry)
local firstTaskIdArg = 2
local held = {}
for i = firstTaskIdArg, #ARGV do
  local id = ARGV[i]
  local score = redis.call("ZSCORE", leaseKey, id)
  if score then
    if tonumber(score) < expiry then
      redis.call("ZADD", leaseKey, "XX", expiry, id)
    end
    table.insert(held, id)
  end
end
return held
