-- inspector_getTask: one task's hash fields and the score that tells when it runs next. Read-only.
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:      (queue key prefix; the state zsets, lease and g:<group> are built from it)
-- ARGV[1] task id
-- Returns false (nil) when the task does not exist, else {msg, state, score, result}: score is
-- the task's score in its state's zset (scheduled/retry/archived/completed: unix s; aggregating:
-- time added to the group), the lease expiry for active, false otherwise.
if redis.call("EXISTS", KEYS[1]) == 0 then
  return false
end
local f = redis.call("HMGET", KEYS[1], "msg", "state", "result", "group")
local state = f[2]
local score = false
if state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  score = redis.call("ZSCORE", KEYS[2] .. state, ARGV[1])
elseif state == "active" then
  score = redis.call("ZSCORE", KEYS[2] .. "lease", ARGV[1])
elseif state == "aggregating" and f[4] then
  score = redis.call("ZSCORE", KEYS[2] .. "g:" .. f[4], ARGV[1])
end
return {f[1], state, score, f[3]}
