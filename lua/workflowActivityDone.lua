-- workflowActivityDone: records an activity's exit for (execution, activity name, attempt); the
-- first write wins, and every writer gets the stored exit back (a replay or a second worker that
-- ran the same activity returns the first result, not its own).
-- KEYS[1]  execution hash      asynq:{<q>}:wf:x:<execution id>
-- ARGV[1]  field: "a:" .. name .. "/" .. attempt
-- ARGV[2]  the exit (JSON)
-- Returns  the stored exit (JSON); false when the execution does not exist (nothing written)
local execKey = KEYS[1]
local field, exit = ARGV[1], ARGV[2]
if redis.call("EXISTS", execKey) == 0 then
  return false
end
redis.call("HSETNX", execKey, field, exit)
return redis.call("HGET", execKey, field)
