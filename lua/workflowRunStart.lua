-- workflowRunStart: a run task of a workflow execution begins (pending run -> running). Only the
-- execution's current run task may run; a leftover one (a run task that is not the execution's
-- `task`) is told so and does nothing. A run retried after a crash (same task id) goes again.
-- Clears the wake flag: every fact written before this call is visible to the run's reads.
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- ARGV[1]  the run task's id
-- Returns  {1, field, value, ...}  the run may go: the execution hash (after the update), flat
--          {2, field, value, ...}  the execution is already complete (the hash, flat)
--          {0}                     not the execution's current run task (nothing written)
--          {-1}                    no such execution
local execKey = KEYS[1]
local runId = ARGV[1]
local state = redis.call("HGET", execKey, "state")
if not state then
  return {-1}
end
if state == "complete" then
  return {2, unpack(redis.call("HGETALL", execKey))}
end
if redis.call("HGET", execKey, "task") ~= runId then
  return {0}
end
redis.call("HSET", execKey, "state", "running")
redis.call("HDEL", execKey, "wake")
redis.call("HINCRBY", execKey, "runs", 1)
return {1, unpack(redis.call("HGETALL", execKey))}
