-- serverStateClear: a server that shuts down removes its state (asynq's ClearServerState, key part).
-- KEYS[1] asynq:servers:{host:pid:serverId}
-- KEYS[2] asynq:workers:{host:pid:serverId}
-- ARGV    none
-- Returns: the number of keys deleted.
local serverKey, workersKey = unpack(KEYS)
return redis.call("DEL", serverKey, workersKey)
