-- holdQueue: holds a queue's leases until a time (a handler's RateLimited with holdQueue: the remote
-- side asked every caller to slow down). Writes hold_until in the queue's flow-control hash (not
-- asynq's; includes/flowLimit.lua reads it first where tasks are leased, and removes it once past).
-- A later hold than the one stored extends it; an earlier one leaves it as it is.
-- KEYS[1] asynq:{q}:flow
-- ARGV[1] hold until, unix ms (the caller's clock)
-- Returns: the hold in effect, unix ms (an integer).
local flowKey = KEYS[1]
local holdUntil = ARGV[1]
local current = tonumber(redis.call("HGET", flowKey, "hold_until"))
if current and current >= tonumber(holdUntil) then
  return current
end
redis.call("HSET", flowKey, "hold_until", holdUntil)
return tonumber(holdUntil)
