-- workflowWake: records a fact for a workflow execution (a deferred's exit, an interrupt signal;
-- the first write of a field wins) and wakes the execution: a suspended execution gets a run
-- enqueued; a pending one is left alone (its run reads the fact; many wakes coalesce into that one
-- run); a running one gets the wake flag, which workflowRunEnd consumes (the run may have read
-- before the fact landed). Automatic wakes ("a") skip an execution suspended by SuspendOnFailure;
-- explicit ones ("e": resume, interrupt) resume it. An execution not started yet keeps the fact
-- for its first run.
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- KEYS[2]  task key prefix     asynq:{<q>}:t:
-- KEYS[3]  pending list        asynq:{<q>}:pending
-- ARGV[1]  field to record first ("d:" .. deferred name, "interrupt", ...), or "" for a plain wake
-- ARGV[2]  its value (JSON)
-- ARGV[3]  mode: "a" automatic, "e" explicit
-- ARGV[4]  next run task id (used only when a run is enqueued)
-- ARGV[5]  next run TaskMessage (protobuf bytes)
-- ARGV[6]  pending_since: unix time in nanoseconds
-- ARGV[7]  control queue name
-- Returns  0  the field was already set: nothing written, no wake (the first write won)
--          1  recorded; no run needed now (pending, running: flagged, complete, not started,
--             or failed and the wake automatic)
--          2  recorded, and a run enqueued
--- @include "includes/enqueueRun.lua"
local execKey, taskKeyPrefix, pendingKey = unpack(KEYS)
local field, value, mode, runId, msg, pendingSince, queueName = unpack(ARGV)
if field ~= "" and redis.call("HSETNX", execKey, field, value) == 0 then
  return 0
end
local state = redis.call("HGET", execKey, "state")
if not state or state == "complete" or state == "pending" then
  return 1
end
if state == "running" then
  if mode == "e" or redis.call("HGET", execKey, "wake") ~= "e" then
    redis.call("HSET", execKey, "wake", mode)
  end
  return 1
end
if mode == "a" and redis.call("HGET", execKey, "failed") == "1" then
  return 1
end
redis.call("HDEL", execKey, "failed")
enqueueRun(execKey, taskKeyPrefix, pendingKey, runId, msg, pendingSince, queueName)
return 2
