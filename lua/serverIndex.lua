-- serverIndex: adds a server's state key to (or removes it from) a listing zset, asynq:servers or
-- asynq:workers, scored by the key's expiry time (unix seconds), as asynq does. Separate from
-- serverStateWrite because the listing zset lives in another cluster slot.
-- KEYS[1] asynq:servers or asynq:workers
-- ARGV[1] "add" or "remove"
-- ARGV[2] member: asynq:servers:{host:pid:serverId} or asynq:workers:{host:pid:serverId}
-- ARGV[3] score: expiry, unix seconds (for "add")
-- Returns: 1 when added/removed, 0 otherwise.
local listingKey = KEYS[1]
local action, member, expiry = unpack(ARGV)
if action == "add" then
  redis.call("ZADD", listingKey, expiry, member)
  return 1
end
return redis.call("ZREM", listingKey, member)
