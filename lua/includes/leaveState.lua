-- includes/leaveState.lua: takes a task out of the list or zset of the state its hash names
-- (pending list; scheduled, retry, archived, completed zsets; its group's zset when aggregating).
-- A group left empty leaves the groups set.
-- Defines leaveState(taskKey, queuePrefix, groupsKey, taskId, refusedStates)
--   taskKey        asynq:{q}:t:<id>
--   queuePrefix    asynq:{q}:   (pending, the state zsets and g:<group> are built from it)
--   groupsKey      asynq:{q}:groups
--   taskId         the task's id
--   refusedStates  the states the caller does not move, as a set: {active = true, ...}
-- Returns state, nil when the task left its state (the state it was in); nil, reply when the
-- caller must return reply and nothing was changed: {0, ""} no such task; {-1, state} the state
-- is refused; an error reply when the task is not where its state says or the state is unknown.
local function leaveState(taskKey, queuePrefix, groupsKey, taskId, refusedStates)
  if redis.call("EXISTS", taskKey) == 0 then
    return nil, {0, ""}
  end
  local fields = redis.call("HMGET", taskKey, "state", "group")
  local state, group = fields[1], fields[2]
  if refusedStates[state] then
    return nil, {-1, state}
  end
  if state == "pending" then
    if redis.call("LREM", queuePrefix .. "pending", 0, taskId) == 0 then
      return nil, redis.error_reply("task " .. taskId .. " says pending but is not in " .. queuePrefix .. "pending")
    end
  elseif state == "aggregating" then
    local groupKey = queuePrefix .. "g:" .. tostring(group)
    if redis.call("ZREM", groupKey, taskId) == 0 then
      return nil, redis.error_reply("task " .. taskId .. " says aggregating but is not in " .. groupKey)
    end
    if redis.call("ZCARD", groupKey) == 0 then
      redis.call("SREM", groupsKey, group)
    end
  elseif state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
    if redis.call("ZREM", queuePrefix .. state, taskId) == 0 then
      return nil, redis.error_reply("task " .. taskId .. " says " .. state .. " but is not in " .. queuePrefix .. state)
    end
  else
    return nil, redis.error_reply("task " .. taskId .. " has an unknown state " .. tostring(state))
  end
  return state, nil
end
