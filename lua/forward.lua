-- forward: scheduled/retry tasks that are due (score <= now) -> pending (LPUSH, state "pending",
-- pending_since = now), or back into their group (hash field "group" set: g:<group> zset scored
-- now, state "aggregating", group listed in the groups set). Scheduled first, then retry; at most
-- ARGV[3] tasks per call. A due id with no task hash is only removed from its zset.
-- KEYS[1] asynq:{q}:scheduled
-- KEYS[2] asynq:{q}:retry
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:        (task key prefix)
-- KEYS[5] asynq:{q}:g:        (group key prefix; group key = KEYS[5] .. group)
-- KEYS[6] asynq:{q}:groups
-- ARGV[1] now, unix seconds
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3] maximum number of tasks to move (>= 1)
-- Returns: {moved from scheduled, moved from retry, dangling ids dropped}
local scheduledKey, retryKey, pendingKey, taskKeyPrefix, groupKeyPrefix, groupsKey = unpack(KEYS)
local nowSeconds, nowNanos, left = unpack(ARGV)
left = tonumber(left)
local sources = {scheduledKey, retryKey}
local counts = {0, 0, 0}
local dangling = 3
for src, sourceKey in ipairs(sources) do
  if left <= 0 then
    break
  end
  local ids = redis.call("ZRANGEBYSCORE", sourceKey, "-inf", nowSeconds, "LIMIT", 0, left)
  for _, id in ipairs(ids) do
    local taskKey = taskKeyPrefix .. id
    redis.call("ZREM", sourceKey, id)
    if redis.call("EXISTS", taskKey) == 0 then
      counts[dangling] = counts[dangling] + 1
    else
      local group = redis.call("HGET", taskKey, "group")
      if group and group ~= "" then
        redis.call("ZADD", groupKeyPrefix .. group, nowSeconds, id)
        redis.call("SADD", groupsKey, group)
        redis.call("HSET", taskKey, "state", "aggregating")
      else
        redis.call("LPUSH", pendingKey, id)
        redis.call("HSET", taskKey, "state", "pending", "pending_since", nowNanos)
      end
      counts[src] = counts[src] + 1
    end
    left = left - 1
  end
end
return counts
