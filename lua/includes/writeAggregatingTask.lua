-- includes/writeAggregatingTask.lua: writes a new task into its group: its hash (msg, state
-- "aggregating", group; as asynq's addToGroup, no unique_key field even with a lock: the key is
-- only inside the message), its id in the group zset scored by now, the group in the groups set.
-- Defines writeAggregatingTask(taskKey, taskId, msg, now, groupKey, groupsKey, groupName)
--   taskKey    asynq:{q}:t:<id>
--   taskId     the task's id
--   msg        encoded TaskMessage
--   now        unix seconds (the group zset score)
--   groupKey   asynq:{q}:g:<group>
--   groupsKey  asynq:{q}:groups
--   groupName  the group's name
-- Returns nothing.
local function writeAggregatingTask(taskKey, taskId, msg, now, groupKey, groupsKey, groupName)
  redis.call("HSET", taskKey, "msg", msg, "state", "aggregating", "group", groupName)
  redis.call("ZADD", groupKey, now, taskId)
  redis.call("SADD", groupsKey, groupName)
end
