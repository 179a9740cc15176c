-- inspector_listZset: one page of a zset-based state (scheduled, retry, archived, completed, or a
-- group's aggregating tasks), in ascending score order like asynq. Read-only.
-- KEYS[1] the zset (asynq:{q}:scheduled, …, or asynq:{q}:g:<group>)
-- KEYS[2] asynq:{q}:t:   (task key prefix)
-- ARGV[1] ZRANGE start
-- ARGV[2] ZRANGE stop
-- Returns a flat array {id, score, msg, result, ...}; a missing field is false (nil).
local zsetKey, taskKeyPrefix = unpack(KEYS)
local start, stop = unpack(ARGV)
local res = {}
local pairs_ = redis.call("ZRANGE", zsetKey, start, stop, "WITHSCORES")
for i = 1, #pairs_, 2 do
  local id = pairs_[i]
  local fields = redis.call("HMGET", taskKeyPrefix .. id, "msg", "result")
  table.insert(res, id)
  table.insert(res, pairs_[i + 1])
  table.insert(res, fields[1])
  table.insert(res, fields[2])
end
return res
