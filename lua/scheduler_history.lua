-- scheduler_history: records one enqueue of a periodic entry in asynq's history zset (read by
-- asynq's CLI and web UI) and keeps only the newest events.
--
-- KEYS[1]  history zset   asynq:scheduler_history:<entryId>
-- ARGV[1]  score: enqueue time, unix seconds
-- ARGV[2]  member: SchedulerEnqueueEvent protobuf bytes
-- ARGV[3]  most events kept (asynq: 1000); the lowest-scored are removed beyond it
--
-- Returns the number of events kept
redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])
local max = tonumber(ARGV[3])
local n = redis.call("ZCARD", KEYS[1])
if n > max then
  redis.call("ZREMRANGEBYRANK", KEYS[1], 0, n - max - 1)
  n = max
end
return n
