-- inspector_deleteTask: any state but active -> deleted (asynq's DeleteTask). Removes the id from
-- its state's list/zset, deletes the hash, and releases the task's uniqueness lock if it still
-- holds it. A group left empty is removed from the groups set.
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; pending, state zsets, g:<group> built from it)
-- KEYS[3] asynq:{q}:groups
-- KEYS[4] asynq:{q}:unique:   (only lock keys under this prefix are touched)
-- ARGV[1] task id
-- Returns {1, previous state} done; {0, ""} no such task; {-1, "active"} refused.
local id = ARGV[1]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return {0, ""}
end
local f = redis.call("HMGET", KEYS[1], "state", "group", "unique_key")
local state, group, ukey = f[1], f[2], f[3]
if state == "active" then
  return {-1, state}
end
if state == "pending" then
  redis.call("LREM", KEYS[2] .. "pending", 0, id)
elseif state == "aggregating" then
  local gkey = KEYS[2] .. "g:" .. tostring(group)
  redis.call("ZREM", gkey, id)
  if redis.call("ZCARD", gkey) == 0 then
    redis.call("SREM", KEYS[3], group)
  end
elseif state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  redis.call("ZREM", KEYS[2] .. state, id)
end
if ukey and string.sub(ukey, 1, #KEYS[4]) == KEYS[4] and redis.call("GET", ukey) == id then
  redis.call("DEL", ukey)
end
redis.call("DEL", KEYS[1])
return {1, tostring(state)}
