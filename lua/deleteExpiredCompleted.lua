-- deleteExpiredCompleted: deletes completed tasks whose retention ended (score <= now), at most
-- ARGV[2] per call. A hash whose state is no longer "completed" is left alone (only the stale
-- zset entry goes).
-- KEYS[1] asynq:{q}:completed
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- ARGV[1] now, unix seconds
-- ARGV[2] maximum number of tasks (>= 1)
-- Returns: the number of task hashes deleted.
local deleted = 0
local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local key = KEYS[2] .. id
  if redis.call("HGET", key, "state") == "completed" then
    redis.call("DEL", key)
    deleted = deleted + 1
  end
  redis.call("ZREM", KEYS[1], id)
end
return deleted
