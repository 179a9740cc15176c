-- includes/enqueueRun.lua: enqueues the next run of a workflow execution as an ordinary pending
-- asynq task on the execution's control queue, and marks it as the execution's one run task.
-- Defines enqueueRun(execKey, taskKeyPrefix, pendingKey, runId, msg, pendingSince, queueName)
--   execKey        asynq:{q}:wf:x:<execution id>
--   taskKeyPrefix  asynq:{q}:t:
--   pendingKey     asynq:{q}:pending
--   runId          the run task's id (fresh, random)
--   msg            the run task's encoded TaskMessage (its id is runId)
--   pendingSince   unix nanoseconds (string)
--   queueName      the control queue's name (the wake message)
-- Sets the execution's fields task = runId, state = "pending" and clears wake.
-- Returns nothing.
--- @include "includes/writePendingTask.lua"
local function enqueueRun(execKey, taskKeyPrefix, pendingKey, runId, msg, pendingSince, queueName)
  writePendingTask(taskKeyPrefix .. runId, runId, msg, pendingSince, nil, pendingKey, queueName)
  redis.call("HSET", execKey, "task", runId, "state", "pending")
  redis.call("HDEL", execKey, "wake")
end
