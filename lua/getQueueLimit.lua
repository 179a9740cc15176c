-- getQueueLimit: reads a queue's flow-control limit (not asynq's; includes/flowLimit.lua).
-- KEYS[1] asynq:{q}:flow
-- ARGV: none
-- Returns: an array of six: limit, per_ms, burst, interval_ms, concurrency, tat (each false when
-- not set; all false for an unlimited queue).
local flowKey = KEYS[1]
return redis.call("HMGET", flowKey, "limit", "per_ms", "burst", "interval_ms", "concurrency", "tat")
