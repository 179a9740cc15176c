-- workflowScheduleClock: schedules a workflow's durable clock (DurableClock.sleep) as an ordinary
-- asynq scheduled task on the execution's control queue; when it is due, a worker's handler
-- completes the clock's deferred (workflowWake), which wakes the execution. Idempotent per clock
-- name: replays schedule the same clock again and nothing is written while its task exists or
-- once its deferred is set (the clock fired). Survives every process being down: it is a task.
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- KEYS[2]  task key prefix     asynq:{<q>}:t:
-- KEYS[3]  scheduled zset      asynq:{<q>}:scheduled
-- ARGV[1]  the clock's deferred field: "d:DurableClock/" .. clock name
-- ARGV[2]  the clock task's id (one per execution and clock name)
-- ARGV[3]  the clock task's TaskMessage (protobuf bytes)
-- ARGV[4]  wake-up time, unix ms (decimal string)
-- ARGV[5]  control queue name
-- Returns  1  scheduled
--          0  already scheduled (its task exists) or already fired (its deferred is set): nothing written
--- @include "includes/writeScheduledTask.lua"
local execKey, taskKeyPrefix, scheduledKey = unpack(KEYS)
local deferredField, taskId, msg, wakeUpMs, queueName = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
if redis.call("HEXISTS", execKey, deferredField) == 1 or redis.call("EXISTS", taskKey) == 1 then
  return 0
end
writeScheduledTask(taskKey, taskId, msg, wakeUpMs, nil, scheduledKey, queueName)
return 1
