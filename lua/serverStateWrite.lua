-- serverStateWrite: a running server's heartbeat state, as asynq's WriteServerState writes it:
-- the ServerInfo under the server key with a TTL, and the workers hash (task id -> WorkerInfo)
-- rewritten from scratch with the same TTL. Both keys share the {host:pid:id} hash tag.
-- KEYS[1] asynq:servers:{host:pid:serverId}
-- KEYS[2] asynq:workers:{host:pid:serverId}
-- ARGV[1] TTL, seconds
-- ARGV[2] ServerInfo bytes
-- ARGV[3], ARGV[4], ... task id, WorkerInfo bytes (pairs; none when idle)
-- Returns: the number of workers written.
local serverKey, workersKey = unpack(KEYS)
local ttlSeconds, serverInfo = ARGV[1], ARGV[2]
local firstWorkerArg = 3
redis.call("SETEX", serverKey, ttlSeconds, serverInfo)
redis.call("DEL", workersKey)
local n = 0
for i = firstWorkerArg, #ARGV - 1, 2 do
  redis.call("HSET", workersKey, ARGV[i], ARGV[i + 1])
  n = n + 1
end
if n > 0 then
  redis.call("EXPIRE", workersKey, ttlSeconds)
end
return n
