-- inspector_archiveTask: pending | scheduled | retry | completed | aggregating -> archived
-- (asynq's ArchiveTask): ZADD archived (score = now), state "archived", then the archive is
-- trimmed (entries at or before ARGV[3], and the oldest beyond ARGV[4], lose their hashes too).
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; pending, state zsets, g:<group> built from it)
-- KEYS[3] asynq:{q}:archived
-- KEYS[4] asynq:{q}:groups
-- KEYS[5] asynq:{q}:t:        (task key prefix, for trimmed tasks)
-- ARGV[1] task id
-- ARGV[2] now, unix seconds
-- ARGV[3] trim cutoff, unix seconds
-- ARGV[4] maximum number of archived tasks kept (>= 1)
-- Returns {1, previous state} done; {0, ""} no such task; {-1, state} refused (active or already
-- archived), nothing changed.
local id = ARGV[1]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return {0, ""}
end
local f = redis.call("HMGET", KEYS[1], "state", "group")
local state, group = f[1], f[2]
if state == "active" or state == "archived" then
  return {-1, state}
end
if state == "pending" then
  if redis.call("LREM", KEYS[2] .. "pending", 0, id) == 0 then
    return redis.error_reply("task " .. id .. " says pending but is not in " .. KEYS[2] .. "pending")
  end
elseif state == "aggregating" then
  local gkey = KEYS[2] .. "g:" .. tostring(group)
  if redis.call("ZREM", gkey, id) == 0 then
    return redis.error_reply("task " .. id .. " says aggregating but is not in " .. gkey)
  end
  if redis.call("ZCARD", gkey) == 0 then
    redis.call("SREM", KEYS[4], group)
  end
elseif state == "scheduled" or state == "retry" or state == "completed" then
  if redis.call("ZREM", KEYS[2] .. state, id) == 0 then
    return redis.error_reply("task " .. id .. " says " .. state .. " but is not in " .. KEYS[2] .. state)
  end
else
  return redis.error_reply("task " .. id .. " has an unknown state " .. tostring(state))
end
redis.call("ZADD", KEYS[3], ARGV[2], id)
redis.call("HSET", KEYS[1], "state", "archived")
redis.call("HDEL", KEYS[1], "pending_since")
local function drop(ids)
  for _, old in ipairs(ids) do
    if old ~= id then
      redis.call("DEL", KEYS[5] .. old)
      redis.call("ZREM", KEYS[3], old)
    end
  end
end
drop(redis.call("ZRANGEBYSCORE", KEYS[3], "-inf", ARGV[3]))
local extra = redis.call("ZCARD", KEYS[3]) - tonumber(ARGV[4])
if extra > 0 then
  drop(redis.call("ZRANGE", KEYS[3], 0, extra - 1))
end
return {1, state}
