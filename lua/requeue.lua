-- requeue: active -> pending, at the head (RPUSH: the next dequeue takes it), state "pending",
-- pending_since = now. The lease is dropped.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:   (task key prefix)
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- Returns: 1 done; 0 the task is not active under a lease (nothing was changed).
local id = ARGV[1]
if not redis.call("ZSCORE", KEYS[2], id) then
  return 0
end
if redis.call("LREM", KEYS[1], 0, id) == 0 then
  return 0
end
redis.call("ZREM", KEYS[2], id)
redis.call("RPUSH", KEYS[3], id)
redis.call("HSET", KEYS[4] .. id, "state", "pending", "pending_since", ARGV[2])
return 1
