-- scheduler_history: records one enqueue of a periodic entry in asynq's history zset (read by
-- asynq's CLI and web UI) and keeps only the newest events.
--
-- KEYS[1]  history zset   asynq:scheduler_history:<entryId>
-- ARGV[1]  score: enqueue time, unix seconds
-- ARGV[2]  member: SchedulerEnqueueEvent protobuf bytes
-- ARGV[3]  most events kept (asynq: 1000); the lowest-scored are removed beyond it
--
-- Returns the number of events kept
local historyKey = KEYS[1]
local enqueuedAt, event, max = unpack(ARGV)
max = tonumber(max)
redis.call("ZADD", historyKey, enqueuedAt, event)
local n = redis.call("ZCARD", historyKey)
if n > max then
  redis.call("ZREMRANGEBYRANK", historyKey, 0, n - max - 1)
  n = max
end
return n
