-- complete: active -> deleted (ARGV[3] = "delete") or active -> completed (ARGV[3] = "keep",
-- kept for its retention: completed zset score = completed_at + retention, msg rewritten with
-- completed_at). Counts the task as processed (daily key with expiry, and the total). Releases the
-- uniqueness lock only while it still holds this task's id.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:completed
-- KEYS[4] asynq:{q}:t:                    (task key prefix)
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd> (UTC date of now)
-- KEYS[6] asynq:{q}:processed
-- KEYS[7] asynq:{q}:unique:<...>          (optional: the task's uniqueness lock)
-- ARGV[1] task id
-- ARGV[2] daily stat key expiry, unix seconds
-- ARGV[3] "delete" | "keep"
-- ARGV[4] completed zset score (expiry of the retained task), unix seconds ("keep" only)
-- ARGV[5] encoded TaskMessage with completed_at set ("keep" only)
-- Returns: 1 done; 0 the task is not active under a lease (nothing was changed).
local id = ARGV[1]
if not redis.call("ZSCORE", KEYS[2], id) then
  return 0
end
if redis.call("LREM", KEYS[1], 0, id) == 0 then
  return 0
end
redis.call("ZREM", KEYS[2], id)
local key = KEYS[4] .. id
if ARGV[3] == "keep" then
  redis.call("ZADD", KEYS[3], ARGV[4], id)
  redis.call("HSET", key, "msg", ARGV[5], "state", "completed")
else
  redis.call("DEL", key)
end
if redis.call("INCR", KEYS[5]) == 1 then
  redis.call("EXPIREAT", KEYS[5], ARGV[2])
end
-- asynq resets the total to 1 when it is at the int64 maximum; INCR refuses exactly that value
-- (overflow), so one INCR does the same as asynq's GET-then-INCR.
local total = redis.pcall("INCR", KEYS[6])
if type(total) == "table" and total.err then
  if not string.find(total.err, "overflow", 1, true) then
    return redis.error_reply(total.err)
  end
  redis.call("SET", KEYS[6], 1)
end
if KEYS[7] and redis.call("GET", KEYS[7]) == id then
  redis.call("DEL", KEYS[7])
end
return 1
