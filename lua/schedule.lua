-- schedule: a new task -> scheduled (asynq's scheduleCmd / scheduleUniqueCmd in one script).
-- Writes the task hash (state "scheduled", no pending_since) and adds the id to the scheduled
-- zset, scored by the process-at time in whole seconds rounded up, with the exact time in
-- asynq:{q}:due_ms when it has a sub-second part (includes/delayTask.lua); `forward` moves it to
-- pending when that time comes. When it is the queue's earliest due task, "<ms> <queue>" is
-- published on "effect-asynq:forward" (forwarders that planned to look later wake up for it).
-- With a uniqueness lock key (KEYS[3]) the lock is taken in the same step. Checks come first and
-- nothing is written unless every check passes.
--
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2]  scheduled zset               asynq:{<q>}:scheduled
-- KEYS[3]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  task id
-- ARGV[2]  encoded TaskMessage (protobuf bytes)
-- ARGV[3]  process-at time, unix ms (decimal string)
-- ARGV[4]  queue name (the wake-up message)
-- ARGV[5]  (with KEYS[3]) lock TTL in milliseconds (>= 1); asynq counts it from the process-at
--          time, so the caller passes (processAt - now) + unique TTL
--
-- Returns  1  scheduled; also when the task hash already holds this same message (same id; same
--             bytes, or the same fields and headers in other bytes, includes/sameTaskMessage.lua): the
--             same write sent again after its reply was lost, or the same task again; nothing written twice
--          0  a different task with this id already exists in the queue (nothing written)
--         -1  the uniqueness lock is held by another task (nothing written)
--- @include "includes/newTask.lua"
--- @include "includes/writeScheduledTask.lua"
local taskKeyPrefix, scheduledKey, lockKey = unpack(KEYS)
local taskId, msg, processAtMs, queueName, lockTtlMs = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
return addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
  writeScheduledTask(taskKey, taskId, msg, processAtMs, lockKey, scheduledKey, queueName)
end)
