-- workflowRemoteSchedule: schedules the check of a workflow's remote step (a step that is an
-- ordinary asynq task on any queue, run by any asynq server). The check is a scheduled task on
-- the execution's control queue; when due, a worker reads the remote task's state and either
-- records the step's outcome (workflowWake on the step's deferred) or schedules the next check
-- ("next"). "first" is the workflow's own call after it enqueued the remote task: it records the
-- dispatch (the marker field, first write wins) so that a replay schedules no second chain of
-- checks. Nothing is written once the step's outcome is in or the execution is gone, nor a "first"
-- once it is complete. A "next" on a complete execution is written: its check stops the remote task,
-- or follows it while a server still runs it, to delete it if it comes back to retry
-- (src/workflow/remoteStop.ts). (A check that read the execution just before its run completed
-- schedules the next one after: refusing it would end the chain with the task still running.)
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- KEYS[2]  task key prefix     asynq:{<q>}:t:
-- KEYS[3]  scheduled zset      asynq:{<q>}:scheduled
-- ARGV[1]  the step's deferred field: "d:RemoteStep/" .. name .. "/" .. attempt
-- ARGV[2]  the step's dispatch marker field: "r:" .. name .. "/" .. attempt
-- ARGV[3]  the marker's value (JSON {"queue","taskId"} of the remote task)
-- ARGV[4]  mode: "first" (the workflow dispatched the step) or "next" (a check found it not done,
--          or running after its execution completed)
-- ARGV[5]  the check task's id
-- ARGV[6]  the check task's TaskMessage (protobuf bytes)
-- ARGV[7]  when the check is due, unix ms (decimal string)
-- ARGV[8]  control queue name
-- Returns  1  the check is scheduled
--          0  nothing written: the outcome is in, the execution is gone, complete ("first"), the
--             step was dispatched before ("first"), or a task with the check's id exists
--- @include "includes/writeScheduledTask.lua"
local execKey, taskKeyPrefix, scheduledKey = unpack(KEYS)
local deferredField, markerField, markerValue, mode, taskId, msg, dueMs, queueName = unpack(ARGV)
local state = redis.call("HGET", execKey, "state")
if not state or (state == "complete" and mode == "first") or redis.call("HEXISTS", execKey, deferredField) == 1 then
  return 0
end
if mode == "first" and redis.call("HSETNX", execKey, markerField, markerValue) == 0 then
  return 0
end
local taskKey = taskKeyPrefix .. taskId
if redis.call("EXISTS", taskKey) == 1 then
  return 0
end
writeScheduledTask(taskKey, taskId, msg, dueMs, nil, scheduledKey, queueName)
return 1
