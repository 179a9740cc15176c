-- writeResult: stores a task's result bytes in its hash field "result" (kept when the task is
-- retained as completed). Only for an existing task: no stray hash is created.
-- KEYS[1] asynq:{q}:t:<id>
-- ARGV[1] result bytes
-- Returns: the number of bytes written; -1 when the task does not exist.
local taskKey = KEYS[1]
local result = ARGV[1]
if redis.call("EXISTS", taskKey) == 0 then
  return -1
end
redis.call("HSET", taskKey, "result", result)
return string.len(result)
