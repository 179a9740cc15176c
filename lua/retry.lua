-- retry: active -> retry (zset score = retry time), msg rewritten (retried, error_msg,
-- last_failed_at), state "retry". When ARGV[5] = "1" (a failure) the task counts as processed and
-- failed (daily keys with expiry, and totals). With ARGV[6] set (recovery of an expired lease) the
-- move happens only while the lease score is still <= ARGV[6], so two recoverers never both move
-- it, and a task re-leased in the meantime is left alone.
-- KEYS[1] asynq:{q}:t:                     (task key prefix)
-- KEYS[2] asynq:{q}:active
-- KEYS[3] asynq:{q}:lease
-- KEYS[4] asynq:{q}:retry
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd>  (UTC date of now)
-- KEYS[6] asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[7] asynq:{q}:processed
-- KEYS[8] asynq:{q}:failed
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (already updated)
-- ARGV[3] retry at, unix seconds
-- ARGV[4] daily stat key expiry, unix seconds
-- ARGV[5] "1" when the attempt counts as a failure, else "0"
-- ARGV[6] lease cutoff, unix seconds, or "" (the caller holds the lease)
-- Returns: 1 done; 0 the task is not active under a (matching) lease (nothing was changed, except
-- that a lease entry for a task missing from the active list is removed as stale).
local id = ARGV[1]
local score = redis.call("ZSCORE", KEYS[3], id)
if not score then
  return 0
end
if ARGV[6] ~= "" and tonumber(score) > tonumber(ARGV[6]) then
  return 0
end
if redis.call("LREM", KEYS[2], 0, id) == 0 then
  -- Not active, yet leased: a stale lease entry (dequeue adds both at once). Drop it, or it would
  -- sit at the head of the expired leases and block recovery of the tasks behind it.
  redis.call("ZREM", KEYS[3], id)
  return 0
end
redis.call("ZREM", KEYS[3], id)
redis.call("ZADD", KEYS[4], ARGV[3], id)
redis.call("HSET", KEYS[1] .. id, "msg", ARGV[2], "state", "retry")
if ARGV[5] == "1" then
  if redis.call("INCR", KEYS[5]) == 1 then
    redis.call("EXPIREAT", KEYS[5], ARGV[4])
  end
  if redis.call("INCR", KEYS[6]) == 1 then
    redis.call("EXPIREAT", KEYS[6], ARGV[4])
  end
  if redis.call("GET", KEYS[7]) == "9223372036854775807" then
    redis.call("SET", KEYS[7], 1)
    redis.call("SET", KEYS[8], 1)
  else
    redis.call("INCR", KEYS[7])
    redis.call("INCR", KEYS[8])
  end
end
return 1
