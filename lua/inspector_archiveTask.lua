-- inspector_archiveTask: pending | scheduled | retry | completed | aggregating -> archived
-- (asynq's ArchiveTask): ZADD archived (score = now), state "archived", then the archive is
-- trimmed (entries at or before ARGV[3], and the oldest beyond ARGV[4], lose their hashes too).
-- A task with a keep-last key (hash field keep_last: one HGET) that was its key's current task
-- releases the key's waiting task (it becomes pending and current) or frees the key; one that was
-- the key's waiting task leaves it (includes/keepLastFree.lua; keys built from KEYS[2]).
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:          (queue key prefix; pending, state zsets, g:<group> built from it)
-- KEYS[3] asynq:{q}:archived
-- KEYS[4] asynq:{q}:groups
-- KEYS[5] asynq:{q}:t:        (task key prefix, for trimmed tasks)
-- ARGV[1] task id
-- ARGV[2] now, unix seconds
-- ARGV[3] trim cutoff, unix seconds
-- ARGV[4] maximum number of archived tasks kept (>= 1)
-- ARGV[5] now, unix nanoseconds (pending_since of a released keep-last task)
-- Returns {1, previous state} done; {0, ""} no such task; {-1, state} refused (active or already
-- archived), nothing changed.
--- @include "includes/leaveState.lua"
--- @include "includes/trimArchive.lua"
--- @include "includes/keepLastState.lua"
--- @include "includes/keepLastFree.lua"
local taskKey, queuePrefix, archivedKey, groupsKey, taskKeyPrefix = unpack(KEYS)
local taskId, now, trimCutoff, maxArchived, nowNanos = unpack(ARGV)
local state, refusal = leaveState(taskKey, queuePrefix, groupsKey, taskId, {active = true, archived = true})
if refusal then
  return refusal
end
redis.call("ZADD", archivedKey, now, taskId)
redis.call("HSET", taskKey, "state", "archived")
redis.call("HDEL", taskKey, "pending_since")
local keepLast = redis.call("HGET", taskKey, "keep_last")
trimArchive(archivedKey, taskKeyPrefix, trimCutoff, maxArchived, taskId)
if keepLast then
  keepLastFree(queuePrefix, keepLast, taskId, nowNanos, string.sub(queuePrefix, 8, -3))
end
return {1, state}
