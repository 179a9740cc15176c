-- archive: active -> archived (zset score = archive time), msg rewritten (error_msg,
-- last_failed_at), state "archived"; counts the task as processed and failed (daily keys with
-- expiry, and totals). Then trims the archive: entries scored at or before ARGV[4] and the oldest
-- entries beyond ARGV[5] are removed together with their task hashes. With ARGV[7] set (recovery
-- of an expired lease) the move happens only while the lease score is still <= ARGV[7].
-- KEYS[1] asynq:{q}:t:                     (task key prefix)
-- KEYS[2] asynq:{q}:active
-- KEYS[3] asynq:{q}:lease
-- KEYS[4] asynq:{q}:archived
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd>  (UTC date of now)
-- KEYS[6] asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[7] asynq:{q}:processed
-- KEYS[8] asynq:{q}:failed
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (already updated)
-- ARGV[3] archived at (now), unix seconds
-- ARGV[4] trim cutoff, unix seconds (now - 90 days by default)
-- ARGV[5] maximum number of archived tasks kept (10000 by default, >= 1)
-- ARGV[6] daily stat key expiry, unix seconds
-- ARGV[7] lease cutoff, unix seconds, or "" (the caller holds the lease)
-- Returns: {1, trimmed} done; {0, 0} the task is not active under a (matching) lease (nothing
-- was changed, except that a lease entry for a task missing from the active list is removed as stale).
local id = ARGV[1]
local score = redis.call("ZSCORE", KEYS[3], id)
if not score then
  return {0, 0}
end
if ARGV[7] ~= "" and tonumber(score) > tonumber(ARGV[7]) then
  return {0, 0}
end
if redis.call("LREM", KEYS[2], 0, id) == 0 then
  -- Not active, yet leased: a stale lease entry (dequeue adds both at once). Drop it, or it would
  -- sit at the head of the expired leases and block recovery of the tasks behind it.
  redis.call("ZREM", KEYS[3], id)
  return {0, 0}
end
redis.call("ZREM", KEYS[3], id)
redis.call("ZADD", KEYS[4], ARGV[3], id)
redis.call("HSET", KEYS[1] .. id, "msg", ARGV[2], "state", "archived")
local trimmed = 0
local function drop(ids)
  for _, old in ipairs(ids) do
    redis.call("DEL", KEYS[1] .. old)
    redis.call("ZREM", KEYS[4], old)
    trimmed = trimmed + 1
  end
end
drop(redis.call("ZRANGEBYSCORE", KEYS[4], "-inf", ARGV[4]))
local extra = redis.call("ZCARD", KEYS[4]) - tonumber(ARGV[5])
if extra > 0 then
  drop(redis.call("ZRANGE", KEYS[4], 0, extra - 1))
end
if redis.call("INCR", KEYS[5]) == 1 then
  redis.call("EXPIREAT", KEYS[5], ARGV[6])
end
if redis.call("INCR", KEYS[6]) == 1 then
  redis.call("EXPIREAT", KEYS[6], ARGV[6])
end
if redis.call("GET", KEYS[7]) == "9223372036854775807" then
  redis.call("SET", KEYS[7], 1)
  redis.call("SET", KEYS[8], 1)
else
  redis.call("INCR", KEYS[7])
  redis.call("INCR", KEYS[8])
end
return {1, trimmed}
