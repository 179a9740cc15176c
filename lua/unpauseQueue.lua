-- unpauseQueue: resumes a paused queue.
-- KEYS[1] asynq:{q}:paused
-- ARGV    none
-- Returns: 1 resumed; 0 it was not paused.
local pausedKey = KEYS[1]
return redis.call("DEL", pausedKey)
