-- enqueue: a new task -> pending (asynq's enqueueCmd / enqueueUniqueCmd in one script).
-- Writes the task hash and LPUSHes the id on the pending list (the worker pops from the tail, so
-- the list is FIFO). With a uniqueness lock key (KEYS[3]) the lock is taken in the same step.
-- Checks come first and nothing is written unless every check passes (asynq's unique script took
-- the lock before the id check, leaving a lock behind on an id conflict; this one does not).
-- When the queue had no pending task and an effect-asynq worker is parked on it (alive now, its
-- token's lease safely ahead of pending_since), the task goes straight to that worker instead,
-- leased as a dequeue would lease it (includes/pushToParked.lua; keys derived from KEYS[2]:
-- asynq:{q}:parked, :parkroom, :paused, :active, :lease, :handover, :alive:<server id>,
-- :push:<server id>).
--
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2]  pending list                 asynq:{<q>}:pending
-- KEYS[3]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  task id
-- ARGV[2]  encoded TaskMessage (protobuf bytes)
-- ARGV[3]  pending_since: unix time in nanoseconds (decimal string); also the enqueue's now for a hand-over
-- ARGV[4]  queue name, published on the channel "effect-asynq:wake" when this push makes the
--          pending list non-empty, so idle workers wake at once (edge-triggered: a busy queue
--          costs no messages; PUBLISH touches no key, so it is cluster-safe)
-- ARGV[5]  (with KEYS[3]) lock TTL in milliseconds (>= 1); "" without a lock when ARGV[6] is given
-- ARGV[6]  (optional) the task's limit key (not asynq's): the task is written as waiting for its
--          key instead (includes/writeKeyedTask.lua: state "scheduled"; keys derived from KEYS[2]:
--          asynq:{q}:scheduled, :lk:<limit key>, :lkeys), never handed to a parked worker
--
-- Returns  1  enqueued (pending, handed to a parked worker, or waiting for its limit key); also when the task hash already holds this same message (same id; same
--             bytes, or the same fields and headers in other bytes, includes/sameTaskMessage.lua): the
--             same write sent again after its reply was lost, or the same task again; nothing written twice
--          0  a different task with this id already exists in the queue (nothing written)
--         -1  the uniqueness lock is held by another task (nothing written)
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
--- @include "includes/pushToParked.lua"
--- @include "includes/writeKeyedTask.lua"
local taskKeyPrefix, pendingKey, lockKey = unpack(KEYS)
local taskId, msg, pendingSince, queueName, lockTtlMs, limitKey = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
return addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
  if limitKey then
    local nowMs = math.floor(tonumber(pendingSince) / 1000000)
    writeKeyedTask(string.sub(pendingKey, 1, -8), taskKey, taskId, msg, lockKey, limitKey, nowMs, queueName)
    return
  end
  if redis.call("LPUSH", pendingKey, taskId) == 1 then
    if pushToParked(pendingKey, taskKey, taskId, msg, lockKey, queueName, math.floor(tonumber(pendingSince) / 1000000)) then
      return
    end
    redis.call("PUBLISH", "effect-asynq:wake", queueName)
  end
  writePendingHash(taskKey, msg, pendingSince, lockKey)
end)
