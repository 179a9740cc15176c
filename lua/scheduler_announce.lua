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
local schedulersKey = KEYS[1]
local member, expiry, dropBelow = unpack(ARGV)
if expiry == "remove" then
  redis.call("ZREM", schedulersKey, member)
else
  redis.call("ZADD", schedulersKey, expiry, member)
end
redis.call("ZREMRANGEBYSCORE", schedulersKey, "-inf", "(" .. dropBelow)
return redis.call("ZCARD", schedulersKey)
