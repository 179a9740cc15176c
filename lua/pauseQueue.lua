-- pauseQueue: marks a queue paused (dequeue skips it). The value is the pause time in unix seconds,
-- no expiry, as asynq writes it.
-- KEYS[1] asynq:{q}:paused
-- ARGV[1] now, unix seconds
-- Returns: 1 paused; 0 it was already paused (nothing was changed).
local pausedKey = KEYS[1]
local now = ARGV[1]
if redis.call("SET", pausedKey, now, "NX") then
  return 1
end
return 0
