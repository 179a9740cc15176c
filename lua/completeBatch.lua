-- completeBatch: complete (lua/complete.lua) for several tasks of one queue in one call
-- (includes/completeTasks.lua): each task active -> deleted or -> completed (kept for its
-- retention) while it is active under a lease, its uniqueness lock released; the processed
-- counters bumped once for the batch.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:completed
-- KEYS[4] asynq:{q}:t:                    (task key prefix)
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd> (UTC date of now)
-- KEYS[6] asynq:{q}:processed
-- KEYS[7..] asynq:{q}:unique:<...>        (the tasks' uniqueness locks; lock index 1 is KEYS[7])
-- ARGV[1] daily stat key expiry, unix seconds
-- ARGV[2..] five entries per task: task id, "delete" | "keep", completed zset score (unix
--         seconds; "keep" only), encoded TaskMessage with completed_at set ("keep" only), index
--         of the task's uniqueness lock among KEYS[7..] (0: none)
-- Returns: an array with one entry per task, in order: 1 done; 0 the task is not active under a
-- lease (nothing was changed for it).
--- @include "includes/completeTasks.lua"
local activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey = unpack(KEYS)
local statExpireAt = unpack(ARGV)
local lockKeys = {}
for i = 7, #KEYS do
  table.insert(lockKeys, KEYS[i])
end
return completeTasks(activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey, statExpireAt, ARGV, 2, lockKeys)
