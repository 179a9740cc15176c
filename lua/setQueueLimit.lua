-- setQueueLimit: sets or clears a queue's flow-control limit (not asynq's; read where tasks are
-- leased, includes/flowLimit.lua and, for the per-key parts, includes/keyLimits.lua). The limit
-- given replaces the one before (a field not given is removed); the rate's state (tat) is kept
-- while the queue keeps a rate, so replacing a limit does not hand out a fresh burst (a faster
-- rate applies at once: the lease brings a TAT later than the new rate allows back within it,
-- includes/flowLimit.lua). With neither a rate nor a cap, for the queue or per key, the key is
-- deleted: the queue is unlimited again and its dequeues pay nothing for the feature.
-- KEYS[1] asynq:{q}:flow
-- ARGV[1] the rate's interval between two tasks, ms (> 0), or "" for no rate
-- ARGV[2] (with a rate) burst (>= 1)
-- ARGV[3] (with a rate) the rate's task count as given (display only)
-- ARGV[4] (with a rate) the rate's period as given, ms (display only)
-- ARGV[5] the concurrency cap (>= 1), or "" for none
-- ARGV[6] (optional) the per-key rate's interval between two tasks of one key, ms (> 0), or "" for none
-- ARGV[7] (with a per-key rate) its burst (>= 1)
-- ARGV[8] (with a per-key rate) its task count as given (display only)
-- ARGV[9] (with a per-key rate) its period as given, ms (display only)
-- ARGV[10] (optional) the per-key concurrency (>= 1), or "" for none
-- Returns: 1 the limit was written; 0 the limit was cleared (the queue is unlimited).
local flowKey = KEYS[1]
local interval, burst, limit, perMs, concurrency, keyInterval, keyBurst, keyLimit, keyPerMs, keyConcurrency = unpack(ARGV)
keyInterval = keyInterval or ""
keyConcurrency = keyConcurrency or ""
if interval == "" and concurrency == "" and keyInterval == "" and keyConcurrency == "" then
  redis.call("DEL", flowKey)
  return 0
end
redis.call("HDEL", flowKey, "interval_ms", "burst", "limit", "per_ms", "concurrency",
  "key_interval_ms", "key_burst", "key_limit", "key_per_ms", "key_concurrency")
if interval ~= "" then
  redis.call("HSET", flowKey, "interval_ms", interval, "burst", burst, "limit", limit, "per_ms", perMs)
else
  redis.call("HDEL", flowKey, "tat")
end
if concurrency ~= "" then
  redis.call("HSET", flowKey, "concurrency", concurrency)
end
if keyInterval ~= "" then
  redis.call("HSET", flowKey, "key_interval_ms", keyInterval, "key_burst", keyBurst, "key_limit", keyLimit, "key_per_ms", keyPerMs)
end
if keyConcurrency ~= "" then
  redis.call("HSET", flowKey, "key_concurrency", keyConcurrency)
end
return 1
