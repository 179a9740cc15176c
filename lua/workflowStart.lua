-- workflowStart: starts a workflow execution, idempotently: the first call records it (workflow
-- name, encoded payload, parent) and enqueues its first run; any later call with the same
-- execution id writes nothing and answers the execution's state and last result.
-- Deferred results stored before the start (a token completed early) are kept.
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- KEYS[2]  task key prefix     asynq:{<q>}:t:
-- KEYS[3]  pending list        asynq:{<q>}:pending
-- ARGV[1]  workflow name
-- ARGV[2]  payload (JSON)
-- ARGV[3]  parent (JSON {"workflow","executionId"}), or "" for none
-- ARGV[4]  first run task id
-- ARGV[5]  first run TaskMessage (protobuf bytes)
-- ARGV[6]  pending_since: unix time in nanoseconds
-- ARGV[7]  control queue name
-- ARGV[8]  the execution's version (recorded at start, read by its runs), or "" for none
-- Returns  {1}                       started (first run enqueued)
--          {2, state, result, failed} already started: its state (pending, running, suspended,
--                                    complete), last result (JSON, "" when none), "1" when
--                                    suspended by SuspendOnFailure
--         {-1, name}                the execution id belongs to another workflow (nothing written)
--- @include "includes/enqueueRun.lua"
local execKey, taskKeyPrefix, pendingKey = unpack(KEYS)
local workflowName, payload, parent, runId, msg, pendingSince, queueName, version = unpack(ARGV)
local existing = redis.call("HGET", execKey, "wf")
if existing then
  if existing ~= workflowName then
    return {-1, existing}
  end
  local state, result, failed = unpack(redis.call("HMGET", execKey, "state", "result", "failed"))
  return {2, state or "", result or "", failed or ""}
end
redis.call("HSET", execKey, "wf", workflowName, "payload", payload, "runs", 0)
if parent ~= "" then
  redis.call("HSET", execKey, "parent", parent)
end
if version and version ~= "" then
  redis.call("HSET", execKey, "version", version)
end
enqueueRun(execKey, taskKeyPrefix, pendingKey, runId, msg, pendingSince, queueName)
return {1}
