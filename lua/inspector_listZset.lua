-- inspector_listZset: one page of a zset-based state (scheduled, retry, archived, completed, or a
-- group's aggregating tasks), in ascending score order like asynq. Read-only.
-- KEYS[1] the zset (asynq:{q}:scheduled, …, or asynq:{q}:g:<group>)
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- KEYS[3] asynq:{q}:due_ms (not asynq's: exact due times of scheduled and retry tasks, unix ms)
-- ARGV[1] ZRANGE start
-- ARGV[2] ZRANGE stop
-- ARGV[3] "1" when the zset holds due times (scheduled, retry): a task's score is then its exact
--         due time in seconds (with a fraction) when due_ms has one that agrees with the zset's
--         whole second (a Go server that moved the task since leaves a stale entry: ignored)
-- Returns a flat array {id, score, msg, result, ...}; a missing field is false (nil).
local zsetKey, taskKeyPrefix, dueMsKey = unpack(KEYS)
local start, stop, exactDue = unpack(ARGV)
local res = {}
local pairs_ = redis.call("ZRANGE", zsetKey, start, stop, "WITHSCORES")
for i = 1, #pairs_, 2 do
  local id = pairs_[i]
  local fields = redis.call("HMGET", taskKeyPrefix .. id, "msg", "result")
  table.insert(res, id)
  local score = pairs_[i + 1]
  if exactDue == "1" then
    local ms = tonumber(redis.call("ZSCORE", dueMsKey, id))
    if ms and math.ceil(ms / 1000) == tonumber(score) then
      score = string.format("%.17g", ms / 1000)
    end
  end
  table.insert(res, score)
  table.insert(res, fields[1])
  table.insert(res, fields[2])
end
return res
