-- dequeueLease: pending -> active, up to ARGV[2] tasks of one queue (nothing when the queue is paused).
-- Each popped task gets a lease (score = ARGV[1]), state "active", and loses pending_since.
-- A popped id whose task hash has no msg (dangling id) is removed from active/lease again and
-- returned with msg = false, so the caller can report it; it cannot block the queue.
-- KEYS[1] asynq:{q}:pending
-- KEYS[2] asynq:{q}:paused
-- KEYS[3] asynq:{q}:active
-- KEYS[4] asynq:{q}:lease
-- KEYS[5] asynq:{q}:t:            (task key prefix; task keys are KEYS[5] .. id)
-- KEYS[6] (with ARGV[4]) asynq:{q}:parked   (park tokens of idle effect-asynq workers)
-- KEYS[7] (with ARGV[4]) asynq:{q}:parkroom (how many tasks each parked worker may still be handed)
-- (asynq:{q}:flow, the queue's flow-control limit, is derived from KEYS[2]: includes/leaseTasks.lua)
-- ARGV[1] lease expiry, unix seconds (or just under it, with a fraction identifying this call: see releaseLeases.lua)
-- ARGV[2] maximum number of tasks to pop (>= 1)
-- ARGV[3] now, unix ms (the clock of the queue's flow-control limit, if it has one)
-- ARGV[4] (optional) the calling worker's server id: it parks on this queue. When this call comes
--         back short, the queue is not paused and no flow limit cut it, KEYS[6] gets field ARGV[4] = ARGV[5] (replacing
--         an older token of that worker), and KEYS[7] gets field ARGV[4] = the slots this call left
--         unfilled (ARGV[2] less the ids popped): the next new tasks of the empty queue, up to that
--         many, are handed to it (lua/includes/pushToParked.lua). Otherwise both fields are removed.
--         A KEYS[6] or KEYS[7] of the wrong type (damaged) is left alone: the worker is not parked
--         (or is handed one task per park), and the dequeue works as without it.
-- ARGV[5] (with ARGV[4]) the park token: a lease score unique to this park, as ARGV[1]
-- ARGV[6] (optional) "ids": ids mode (includes/leaseTasks.lua): the reply has the ids alone, not the
--         messages, and the ids are appended to asynq:{q}:leasing for a SORT that reads the
--         messages in the same MULTI (src/broker/leaseByIds.ts). ARGV[4] is "" when not parking.
-- Returns: a flat array id1, msg1, id2, msg2, ... (msg false for a dangling id; in ids mode id1, id2, ...); empty when
-- paused or empty. When the queue's flow limit cut the call short, one more element ends the
-- array (its length is then odd; in ids mode read it as a number among the string ids): the wait until the next task is allowed, in ms from ARGV[3]
-- (>= 0: the rate), or -1 (the concurrency cap: a task of the queue has to end first).
-- Commands: a fixed few per call plus three per task (includes/leaseTasks.lua).
--- @include "includes/leaseTasks.lua"
local pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix = unpack(KEYS)
local parkedKey, roomKey = KEYS[6], KEYS[7]
local leaseExpiry, maxTasks, nowMs, parker, parkToken, mode = unpack(ARGV)
local idsOnly = mode == "ids"
local out = {}
local wait = leaseTasks(pendingKey, pausedKey, activeKey, leaseKey, taskKeyPrefix, leaseExpiry, tonumber(maxTasks), out, nowMs, idsOnly)
local popped = idsOnly and #out or #out / 2
if parker and parker ~= "" then
  if not wait and popped < tonumber(maxTasks) and redis.call("EXISTS", pausedKey) == 0 then
    redis.pcall("HSET", parkedKey, parker, parkToken)
    redis.pcall("HSET", roomKey, parker, tonumber(maxTasks) - popped)
  else
    redis.pcall("HDEL", parkedKey, parker)
    redis.pcall("HDEL", roomKey, parker)
  end
end
if wait then
  table.insert(out, wait)
end
return out
