-- completeAndLease: completeBatch and dequeueLease of one queue in one call: the tasks that finished
-- are completed (includes/completeTasks.lua: active -> deleted or -> completed, locks released,
-- counters bumped once), then up to ARGV[3] pending tasks are leased (includes/leaseTasks.lua:
-- pending -> active under a lease; nothing when the queue is paused). One round trip and one script
-- call per task at concurrency 1 (as BullMQ's moveToFinished fetching the next job).
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:completed
-- KEYS[4] asynq:{q}:t:                    (task key prefix)
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd> (UTC date of now)
-- KEYS[6] asynq:{q}:processed
-- KEYS[7] asynq:{q}:pending
-- KEYS[8] asynq:{q}:paused
-- KEYS[9..] asynq:{q}:unique:<...>        (the tasks' uniqueness locks; lock index 1 is KEYS[9])
-- ARGV[1] daily stat key expiry, unix seconds
-- ARGV[2] lease score of the tasks leased: the lease expiry in unix seconds, or the dequeue call's own score
--         just under it (src/broker/releaseLeases.ts leaseScore), as dequeueLease's ARGV[1]
-- ARGV[3] most tasks to lease (>= 1)
-- ARGV[4] now, unix ms (the clock of the queue's flow-control limit, if it has one: includes/leaseTasks.lua)
-- ARGV[5..] five entries per task to complete, as completeBatch's ARGV[2..]
-- Returns: a two-element array: the completions (one entry per task, in order: 1 done, 2 already done, 0 not active
-- under a lease) and the leased tasks as dequeueLease returns them (flat id1, msg1, ...; msg false
-- for a dangling id; when the queue's flow limit cut the lease short, one more element ends it:
-- the wait until the next task is allowed, as in dequeueLease). The completions come first, so
-- the tasks they end free the queue's concurrency cap for this lease.
--- @include "includes/completeTasks.lua"
--- @include "includes/leaseTasks.lua"
local activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey, pendingKey, pausedKey = unpack(KEYS)
local statExpireAt, leaseExpiry, maxTasks, nowMs = unpack(ARGV)
local lockKeys = {}
for i = 9, #KEYS do
  table.insert(lockKeys, KEYS[i])
end
local completed = completeTasks(activeKey, leaseKey, completedKey, taskKeyPrefix, processedDayKey, processedTotalKey, statExpireAt, ARGV, 5, lockKeys)
local leased = {}
local wait = leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, tonumber(maxTasks), leased, nowMs, false)
if wait then
  table.insert(leased, wait)
end
return { completed, leased }
