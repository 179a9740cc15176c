-- inspector_runAll: moves up to ARGV[1] tasks of a zset state (scheduled, retry, archived) or
-- of a group (aggregating) to pending, lowest score first (asynq's RunAll*Tasks, in bounded
-- batches so a huge set never blocks Redis). Each task: LPUSH pending, state "pending",
-- pending_since = now. An emptied group leaves the groups set.
-- KEYS[1] source zset: asynq:{q}:scheduled | retry | archived | asynq:{q}:g:<group>
-- KEYS[2] asynq:{q}:pending
-- KEYS[3] asynq:{q}:t:       (task key prefix)
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] batch size (> 0)
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3] group name when KEYS[1] is a group, else ""
-- Returns {moved, left in the source}.
--- @include "includes/batchSource.lua"
local sourceKey, pendingKey, taskKeyPrefix, groupsKey = unpack(KEYS)
local batchSize, now, groupName = unpack(ARGV)
batchSize = tonumber(batchSize)
local ids = takeBatch(sourceKey, "zset", batchSize)
for _, id in ipairs(ids) do
  redis.call("LPUSH", pendingKey, id)
  redis.call("HSET", taskKeyPrefix .. id, "state", "pending", "pending_since", now)
end
local left = leftInSource(sourceKey, "zset", groupsKey, groupName)
return {#ids, left}
