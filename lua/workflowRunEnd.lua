-- workflowRunEnd: a run of a workflow execution ends (running -> complete | suspended). Complete:
-- stores the result (the hash then expires after the retention, when one is set) and publishes
-- the execution on "effect-asynq:wf:done". Suspended: stores the
-- Suspended result; when a wake landed while the run was going (the wake flag, set by
-- workflowWake), the flag is consumed here and the next run is enqueued at once, so a wake is
-- never lost between the run's last read and its suspension. An automatic wake does not resume
-- an execution suspended by SuspendOnFailure (failed); an explicit one does.
-- Only the execution's current run task may end it; a leftover run writes nothing.
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- KEYS[2]  task key prefix     asynq:{<q>}:t:
-- KEYS[3]  pending list        asynq:{<q>}:pending
-- ARGV[1]  the ending run task's id
-- ARGV[2]  outcome: "complete" or "suspended"
-- ARGV[3]  the result (JSON)
-- ARGV[4]  "1" when suspended by SuspendOnFailure, else "0"
-- ARGV[5]  next run task id (used only when a next run is enqueued)
-- ARGV[6]  next run TaskMessage (protobuf bytes)
-- ARGV[7]  pending_since: unix time in nanoseconds
-- ARGV[8]  control queue name
-- ARGV[9]  the done message published on completion: <queue> "\n" <execution id>
-- ARGV[10] how long a complete execution is kept, in ms ("0": kept until deleted)
-- ARGV[11] suspended: the deferreds the run waits on (a JSON array of names, or ""), kept in the
--          hash's "waiting" field for the inspector; a complete execution waits on none
-- Returns  1  recorded (complete; or suspended with no wake pending)
--          2  suspended, and a wake came during the run: the next run is enqueued
--          0  not the execution's current run task (nothing written)
--- @include "includes/enqueueRun.lua"
local execKey, taskKeyPrefix, pendingKey = unpack(KEYS)
local runId, outcome, result, failed, nextRunId, nextMsg, pendingSince, queueName, doneMessage, retentionMs, waiting =
  unpack(ARGV)
if redis.call("HGET", execKey, "task") ~= runId then
  return 0
end
if outcome == "complete" then
  redis.call("HSET", execKey, "state", "complete", "result", result)
  redis.call("HDEL", execKey, "task", "wake", "failed", "waiting")
  if tonumber(retentionMs) > 0 then
    redis.call("PEXPIRE", execKey, retentionMs)
  end
  redis.call("PUBLISH", "effect-asynq:wf:done", doneMessage)
  return 1
end
redis.call("HSET", execKey, "state", "suspended", "result", result, "waiting", waiting or "")
if failed == "1" then
  redis.call("HSET", execKey, "failed", "1")
else
  redis.call("HDEL", execKey, "failed")
end
local wake = redis.call("HGET", execKey, "wake")
if wake == "e" or (wake == "a" and failed ~= "1") then
  if wake == "e" then
    redis.call("HDEL", execKey, "failed")
  end
  enqueueRun(execKey, taskKeyPrefix, pendingKey, nextRunId, nextMsg, pendingSince, queueName)
  return 2
end
redis.call("HDEL", execKey, "task", "wake")
return 1
