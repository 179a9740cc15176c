-- inspector_getTaskInfo: one task's hash fields and the score that tells when it runs next. Read-only.
-- KEYS[1] asynq:{q}:t:<id>
-- KEYS[2] asynq:{q}:      (queue key prefix; the state zsets, lease and g:<group> are built from it)
-- ARGV[1] task id
-- Returns false (nil) when the task does not exist, else {msg, state, score, result}: score is
-- the task's score in its state's zset (scheduled/retry/archived/completed: unix s; aggregating:
-- time added to the group), the lease expiry for active, false otherwise. For scheduled and retry
-- it is the exact due time (seconds with a fraction) when asynq:{q}:due_ms has one that agrees with
-- the zset's whole second.
local taskKey, queuePrefix = unpack(KEYS)
local taskId = ARGV[1]
if redis.call("EXISTS", taskKey) == 0 then
  return false
end
local fields = redis.call("HMGET", taskKey, "msg", "state", "result", "group")
local msg, state, result, group = fields[1], fields[2], fields[3], fields[4]
local score = false
if state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  score = redis.call("ZSCORE", queuePrefix .. state, taskId)
  if score and (state == "scheduled" or state == "retry") then
    local ms = tonumber(redis.call("ZSCORE", queuePrefix .. "due_ms", taskId))
    if ms and math.ceil(ms / 1000) == tonumber(score) then
      score = string.format("%.17g", ms / 1000)
    end
  end
elseif state == "active" then
  score = redis.call("ZSCORE", queuePrefix .. "lease", taskId)
elseif state == "aggregating" and group then
  score = redis.call("ZSCORE", queuePrefix .. "g:" .. group, taskId)
end
return {msg, state, score, result}
