-- addToGroup: a new task -> aggregating (asynq's addToGroupCmd / addToGroupUniqueCmd in one
-- script). Writes the task hash (state "aggregating", field `group`, no pending_since), adds the
-- id to the group's zset scored by the time it was added, and the group name to the queue's
-- groups set; the aggregator later turns the group into one pending task.
-- With a uniqueness lock key (KEYS[4]) the lock is taken in the same step. As in asynq, the hash
-- then gets NO `unique_key` field (the key is only inside the message). Checks come first and
-- nothing is written unless every check passes.
--
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2]  group zset                   asynq:{<q>}:g:<group>
-- KEYS[3]  groups set                   asynq:{<q>}:groups
-- KEYS[4]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  task id
-- ARGV[2]  encoded TaskMessage (protobuf bytes)
-- ARGV[3]  now, unix seconds (the group zset score)
-- ARGV[4]  group name
-- ARGV[5]  (with KEYS[4]) lock TTL in milliseconds (>= 1)
--
-- Returns  1  added to the group; also when the task hash already holds this same message (same id; same
--             bytes, or the same fields and headers in other bytes, includes/sameTaskMessage.lua): the
--             same write sent again after its reply was lost, or the same task again; nothing written twice
--          0  a different task with this id already exists in the queue (nothing written)
--         -1  the uniqueness lock is held by another task (nothing written)
--- @include "includes/newTask.lua"
--- @include "includes/writeAggregatingTask.lua"
local taskKeyPrefix, groupKey, groupsKey, lockKey = unpack(KEYS)
local taskId, msg, now, groupName, lockTtlMs = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
return addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
  writeAggregatingTask(taskKey, taskId, msg, now, groupKey, groupsKey, groupName)
end)
