-- inspector_deleteAll: deletes up to ARGV[2] tasks of pending (oldest first), of a zset state
-- (scheduled, retry, archived, completed: lowest score first) or of a group (aggregating)
-- (asynq's DeleteAll*Tasks, in bounded batches): the id leaves the list/zset, the hash is deleted
-- and a uniqueness lock the task still holds is released. An emptied group leaves the groups set.
-- KEYS[1] source: asynq:{q}:pending (list) | scheduled | retry | archived | completed |
--         asynq:{q}:g:<group> (zsets)
-- KEYS[2] asynq:{q}:t:       (task key prefix)
-- KEYS[3] asynq:{q}:groups
-- KEYS[4] asynq:{q}:unique:  (only lock keys under this prefix are touched)
-- ARGV[1] "list" or "zset": the type of KEYS[1]
-- ARGV[2] batch size (> 0)
-- ARGV[3] group name when KEYS[1] is a group, else ""
-- Returns {deleted, left in the source}.
--- @include "includes/batchSource.lua"
--- @include "includes/deleteTaskHash.lua"
local sourceKey, taskKeyPrefix, groupsKey, lockPrefix = unpack(KEYS)
local sourceType, batchSize, groupName = unpack(ARGV)
batchSize = tonumber(batchSize)
local ids = takeBatch(sourceKey, sourceType, batchSize)
for _, id in ipairs(ids) do
  deleteTaskHash(taskKeyPrefix .. id, id, lockPrefix)
end
local left = leftInSource(sourceKey, sourceType, groupsKey, groupName)
return {#ids, left}
