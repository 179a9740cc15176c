-- inspector_listList: one page of a list-based state (pending or active), with each task's hash
-- fields and, for active tasks, its lease expiry. Read-only.
-- KEYS[1] asynq:{q}:pending or asynq:{q}:active
-- KEYS[2] asynq:{q}:t:     (task key prefix)
-- KEYS[3] asynq:{q}:lease
-- ARGV[1] LRANGE start (negative index: the page is counted from the tail, the oldest end)
-- ARGV[2] LRANGE stop
-- Returns a flat array {id, msg, result, lease score, ...} in LRANGE order (head first); a missing
-- field is false (nil).
local listKey, taskKeyPrefix, leaseKey = unpack(KEYS)
local start, stop = unpack(ARGV)
local res = {}
for _, id in ipairs(redis.call("LRANGE", listKey, start, stop)) do
  local fields = redis.call("HMGET", taskKeyPrefix .. id, "msg", "result")
  table.insert(res, id)
  table.insert(res, fields[1])
  table.insert(res, fields[2])
  table.insert(res, redis.call("ZSCORE", leaseKey, id))
end
return res
