-- scheduler_announce: adds (or removes) a scheduler instance in the zset of all schedulers that
-- asynq's tools read (member = the instance's entries key, score = when it expires, unix s), and
-- drops members that expired more than a minute ago (instances that died without withdrawing).
--
-- KEYS[1]  all schedulers zset   asynq:schedulers
-- ARGV[1]  member: asynq:schedulers:{<schedulerId>}
-- ARGV[2]  expiry, unix seconds (now + 20 s); "remove" to withdraw the member
-- ARGV[3]  drop members scored below this, unix seconds
--
-- Returns the number of members left
if ARGV[2] == "remove" then
  redis.call("ZREM", KEYS[1], ARGV[1])
else
  redis.call("ZADD", KEYS[1], ARGV[2], ARGV[1])
end
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", "(" .. ARGV[3])
return redis.call("ZCARD", KEYS[1])
