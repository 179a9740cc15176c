-- inspector_archiveAll: archives up to ARGV[2] tasks of pending (oldest first), of a zset state
-- (scheduled, retry: lowest score first) or of a group (aggregating) (asynq's ArchiveAll*Tasks,
-- in bounded batches). Each task: ZADD archived (score = now), state "archived". Then the archive
-- is trimmed like asynq (entries at or before ARGV[4] and the oldest beyond ARGV[5] are deleted
-- with their hashes). An emptied group leaves the groups set.
-- KEYS[1] source: asynq:{q}:pending (list) | scheduled | retry | asynq:{q}:g:<group> (zsets)
-- KEYS[2] asynq:{q}:archived
-- KEYS[3] asynq:{q}:t:       (task key prefix)
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] "list" or "zset": the type of KEYS[1]
-- ARGV[2] batch size (> 0)
-- ARGV[3] now, unix seconds
-- ARGV[4] trim cutoff, unix seconds
-- ARGV[5] maximum number of archived tasks kept (>= 1)
-- ARGV[6] group name when KEYS[1] is a group, else ""
-- Returns {moved, left in the source, trimmed}.
--- @include "includes/batchSource.lua"
--- @include "includes/trimArchive.lua"
local sourceKey, archivedKey, taskKeyPrefix, groupsKey = unpack(KEYS)
local sourceType, batchSize, now, trimCutoff, maxArchived, groupName = unpack(ARGV)
batchSize = tonumber(batchSize)
local ids = takeBatch(sourceKey, sourceType, batchSize)
for _, id in ipairs(ids) do
  redis.call("ZADD", archivedKey, now, id)
  redis.call("HSET", taskKeyPrefix .. id, "state", "archived")
  redis.call("HDEL", taskKeyPrefix .. id, "pending_since")
end
local trimmed = trimArchive(archivedKey, taskKeyPrefix, trimCutoff, maxArchived, nil)
local left = leftInSource(sourceKey, sourceType, groupsKey, groupName)
return {#ids, left, trimmed}
