-- includes/keepLastState.lua: how keep-last reads a task of a key (lua/enqueueKeepLast.lua,
-- lua/keepLastRelease.lua): its state, and whether that state is unfinished.
-- Defines keepLastStateOf(taskKeyPrefix, id)
--   taskKeyPrefix  asynq:{q}:t:
--   id             a task id, or nil/false
-- Returns the task hash's state ("pending", "active", ...), or nil/false (no id, no task).
-- Defines keepLastUnfinished(state)
--   state  what keepLastStateOf returned
-- Returns true while the task exists and is neither completed nor archived.
local function keepLastStateOf(taskKeyPrefix, id)
  return id and redis.call("HGET", taskKeyPrefix .. id, "state")
end
local function keepLastUnfinished(state)
  return state and state ~= "completed" and state ~= "archived"
end
