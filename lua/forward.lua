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
local left = tonumber(ARGV[3])
local counts = {0, 0, 0}
for src = 1, 2 do
  if left <= 0 then
    break
  end
  local ids = redis.call("ZRANGEBYSCORE", KEYS[src], "-inf", ARGV[1], "LIMIT", 0, left)
  for _, id in ipairs(ids) do
    local key = KEYS[4] .. id
    redis.call("ZREM", KEYS[src], id)
    if redis.call("EXISTS", key) == 0 then
      counts[3] = counts[3] + 1
    else
      local group = redis.call("HGET", key, "group")
      if group and group ~= "" then
        redis.call("ZADD", KEYS[5] .. group, ARGV[1], id)
        redis.call("SADD", KEYS[6], group)
        redis.call("HSET", key, "state", "aggregating")
      else
        redis.call("LPUSH", KEYS[3], id)
        redis.call("HSET", key, "state", "pending", "pending_since", ARGV[2])
      end
      counts[src] = counts[src] + 1
    end
    left = left - 1
  end
end
return counts
