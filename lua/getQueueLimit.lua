-- getQueueLimit: reads a queue's flow-control limit and hold (not asynq's; includes/flowLimit.lua,
-- includes/keyLimits.lua, lua/holdQueue.lua).
-- KEYS[1] asynq:{q}:flow
-- ARGV: none
-- Returns: an array of twelve: limit, per_ms, burst, interval_ms, concurrency, tat, key_limit,
-- key_per_ms, key_burst, key_interval_ms, key_concurrency, hold_until (unix ms) (each false when
-- not set; all false for an unlimited queue that is not held).
local flowKey = KEYS[1]
return redis.call("HMGET", flowKey, "limit", "per_ms", "burst", "interval_ms", "concurrency", "tat",
  "key_limit", "key_per_ms", "key_burst", "key_interval_ms", "key_concurrency", "hold_until")
