-- inspector_runTask: scheduled | retry | archived | completed | aggregating -> pending (asynq's
-- RunTask). The task is pushed to the head of pending (LPUSH, like enqueue), state "pending" and
-- pending_since = now. A group left empty is removed from the groups set.
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; state zsets and g:<group> are built from it)
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- Returns {1, previous state} done; {0, ""} no such task; {-1, state} refused (pending or
-- active), nothing changed.
local id = ARGV[1]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return {0, ""}
end
local f = redis.call("HMGET", KEYS[1], "state", "group")
local state, group = f[1], f[2]
if state == "pending" or state == "active" then
  return {-1, state}
end
if state == "aggregating" then
  local gkey = KEYS[2] .. "g:" .. tostring(group)
  if redis.call("ZREM", gkey, id) == 0 then
    return redis.error_reply("task " .. id .. " says aggregating but is not in " .. gkey)
  end
  if redis.call("ZCARD", gkey) == 0 then
    redis.call("SREM", KEYS[4], group)
  end
elseif state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  if redis.call("ZREM", KEYS[2] .. state, id) == 0 then
    return redis.error_reply("task " .. id .. " says " .. state .. " but is not in " .. KEYS[2] .. state)
  end
else
  return redis.error_reply("task " .. id .. " has an unknown state " .. tostring(state))
end
redis.call("LPUSH", KEYS[3], id)
redis.call("HSET", KEYS[1], "state", "pending", "pending_since", ARGV[2])
return {1, state}
