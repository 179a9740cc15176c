-- inspector_queueStats: read-only snapshot of one queue's counters (asynq's CurrentStats).
-- KEYS[1]  asynq:{q}:pending
-- KEYS[2]  asynq:{q}:active
-- KEYS[3]  asynq:{q}:scheduled
-- KEYS[4]  asynq:{q}:retry
-- KEYS[5]  asynq:{q}:archived
-- KEYS[6]  asynq:{q}:completed
-- KEYS[7]  asynq:{q}:processed:<yyyy-mm-dd>  (today, UTC)
-- KEYS[8]  asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[9]  asynq:{q}:processed                (total)
-- KEYS[10] asynq:{q}:failed                   (total)
-- KEYS[11] asynq:{q}:paused
-- KEYS[12] asynq:{q}:groups
-- KEYS[13] asynq:{q}:t:                       (task key prefix)
-- KEYS[14] asynq:{q}:g:                       (group key prefix)
-- ARGV: none
-- Returns {pending, active, scheduled, retry, archived, completed, processed today, failed today,
-- processed total, failed total, paused (0/1), group count, aggregating count,
-- oldest pending task's pending_since (unix ns as a string, "" when none)}.
local res = {}
res[1] = redis.call("LLEN", KEYS[1])
res[2] = redis.call("LLEN", KEYS[2])
for i = 3, 6 do
  res[i] = redis.call("ZCARD", KEYS[i])
end
for i = 7, 10 do
  res[i] = tonumber(redis.call("GET", KEYS[i]) or "0") or 0
end
res[11] = redis.call("EXISTS", KEYS[11])
local groups = redis.call("SMEMBERS", KEYS[12])
res[12] = #groups
local aggregating = 0
for _, g in ipairs(groups) do
  aggregating = aggregating + redis.call("ZCARD", KEYS[14] .. g)
end
res[13] = aggregating
local oldest = ""
if res[1] > 0 then
  local id = redis.call("LINDEX", KEYS[1], -1)
  oldest = redis.call("HGET", KEYS[13] .. id, "pending_since") or ""
end
res[14] = oldest
return res
