-- keepLastRelease: a keep-last key's current task finished (completed, archived or dropped): its
-- waiting task, if any, moves from scheduled to pending (an ordinary pending task now) and becomes
-- the key's current task; with none waiting the key is deleted (the key is free) and leaves the
-- queue's index asynq:{q}:keyindex (derived from KEYS[3]: same slot). Sent by the worker that
-- settled the current task (lua/enqueueKeepLast.lua describes the key; includes/keepLastFree.lua
-- the rules: nothing is done unless the key names this task as current and it has finished).
-- KEYS[1] task key prefix   asynq:{<q>}:t:
-- KEYS[2] pending list      asynq:{<q>}:pending
-- KEYS[3] scheduled zset    asynq:{<q>}:scheduled
-- KEYS[4] keep-last key     asynq:{<q>}:keeplast:<key>
-- ARGV[1] the finished task's id
-- ARGV[2] pending_since for the released task: unix time in nanoseconds (decimal string)
-- ARGV[3] queue name (the wake-up message)
-- Returns 2 the waiting task was released (pending now, the key's current task); 1 the key is
-- free or moved to a waiting task already released; 0 nothing to do.
--- @include "includes/keepLastState.lua"
--- @include "includes/keepLastFree.lua"
local taskKeyPrefix, pendingKey, scheduledKey, keepKey = unpack(KEYS)
local finishedId, pendingSince, queueName = unpack(ARGV)
local queuePrefix = string.sub(scheduledKey, 1, -10)
return keepLastFree(queuePrefix, string.sub(keepKey, #queuePrefix + 10), finishedId, pendingSince, queueName)
