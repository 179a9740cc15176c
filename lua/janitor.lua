-- janitor: deletes completed tasks whose retention ended (score <= now), at most
-- ARGV[2] per call. A hash whose state is no longer "completed" is left alone (only the stale
-- zset entry goes).
-- KEYS[1] asynq:{q}:completed
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- ARGV[1] now, unix seconds
-- ARGV[2] maximum number of tasks (>= 1)
-- Returns: the number of task hashes deleted.
local completedKey, taskKeyPrefix = unpack(KEYS)
local now, maxDeleted = unpack(ARGV)
maxDeleted = tonumber(maxDeleted)
local deleted = 0
local ids = redis.call("ZRANGEBYSCORE", completedKey, "-inf", now, "LIMIT", 0, maxDeleted)
for _, id in ipairs(ids) do
  local taskKey = taskKeyPrefix .. id
  if redis.call("HGET", taskKey, "state") == "completed" then
    redis.call("DEL", taskKey)
    deleted = deleted + 1
  end
  redis.call("ZREM", completedKey, id)
end
return deleted
