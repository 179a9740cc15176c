-- includes/batchSource.lua: the source of a bounded batch action: the pending list (taken from
-- the tail, oldest first) or a zset (lowest score first).
-- Defines takeBatch(sourceKey, sourceType, count)
--   sourceKey   the list or zset
--   sourceType  "list" or "zset"
--   count       most ids taken (> 0)
-- Returns the ids taken, now removed from the source.
-- Defines leftInSource(sourceKey, sourceType, groupsKey, groupName)
--   groupsKey   asynq:{q}:groups
--   groupName   the group when the source is a group zset (asynq:{q}:g:<group>), else ""
-- Returns how many ids the source still holds; an emptied group leaves the groups set.
local function takeBatch(sourceKey, sourceType, count)
  if sourceType == "list" then
    return redis.call("RPOP", sourceKey, count) or {}
  end
  local ids = redis.call("ZRANGE", sourceKey, 0, count - 1)
  if #ids > 0 then
    redis.call("ZREM", sourceKey, unpack(ids))
  end
  return ids
end
local function leftInSource(sourceKey, sourceType, groupsKey, groupName)
  local left
  if sourceType == "list" then
    left = redis.call("LLEN", sourceKey)
  else
    left = redis.call("ZCARD", sourceKey)
  end
  if left == 0 and groupName ~= "" then
    redis.call("SREM", groupsKey, groupName)
  end
  return left
end
