-- archiveCorrupt: a task whose msg cannot be decoded leaves its source (active + lease, or an
-- aggregation set) for the archive, its bytes untouched, state "archived", and the reason in the
-- hash field "error" (asynq ignores unknown hash fields). A task hash with no msg at all is only
-- removed from the source (there is nothing to archive).
-- KEYS[1] asynq:{q}:t:          (task key prefix)
-- KEYS[2] asynq:{q}:archived
-- KEYS[3] source: asynq:{q}:active (ARGV[4] = "active") or asynq:{q}:g:<group>:<setId> ("set")
-- KEYS[4] asynq:{q}:lease       (only when ARGV[4] = "active")
-- ARGV[1] task id
-- ARGV[2] error text
-- ARGV[3] now, unix seconds
-- ARGV[4] "active" | "set"
-- Returns: 1 archived; 2 dropped (no msg); 0 the id was not in the source (nothing was changed).
local taskKeyPrefix, archivedKey, sourceKey, leaseKey = unpack(KEYS)
local taskId, errorText, now, sourceType = unpack(ARGV)
local removed
if sourceType == "active" then
  removed = redis.call("LREM", sourceKey, 0, taskId)
  redis.call("ZREM", leaseKey, taskId)
else
  removed = redis.call("ZREM", sourceKey, taskId)
end
if removed == 0 then
  return 0
end
local taskKey = taskKeyPrefix .. taskId
if redis.call("HEXISTS", taskKey, "msg") == 0 then
  redis.call("DEL", taskKey)
  return 2
end
redis.call("ZADD", archivedKey, now, taskId)
redis.call("HSET", taskKey, "state", "archived", "error", errorText)
redis.call("HDEL", taskKey, "pending_since")
return 1
