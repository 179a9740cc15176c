-- requeue: active -> pending, at the head (RPUSH: the next dequeue takes it), state "pending",
-- pending_since = now. The lease is dropped.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:   (task key prefix)
-- ARGV[1] task id
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3] (optional) the task's limit key (not asynq's): the task goes back to waiting for its key
--         instead, at the head of its line (state "scheduled" under the sentinel score, its id
--         RPUSHed on asynq:{q}:lk:<limit key>, the key in asynq:{q}:lkeys, and when it joins
--         it, "l:<limit key>" in asynq:{q}:keyindex and woken workers: keys
--         derived from KEYS[3], same slot; includes/keyLimits.lua); "already done" is then the
--         task found waiting so.
-- Returns: 1 done; 2 already done by this very call (the task is pending with pending_since =
-- ARGV[2]: a resend of a call that ran but whose reply was lost; nothing is changed again); 0 the
-- task is not active under a lease (nothing was changed).
--- @include "includes/leaveActive.lua"
local activeKey, leaseKey, pendingKey, taskKeyPrefix = unpack(KEYS)
local taskId, now, limitKey = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
local queuePrefix = string.sub(pendingKey, 1, -8)
if not leaveActive(activeKey, leaseKey, taskId, "", false) then
  if limitKey then
    if tonumber(redis.call("ZSCORE", queuePrefix .. "scheduled", taskId)) == 253402300799 then
      return 2
    end
  elseif redis.call("HGET", taskKey, "state") == "pending" and redis.call("HGET", taskKey, "pending_since") == now then
    return 2
  end
  return 0
end
if limitKey then
  redis.call("HSET", taskKey, "state", "scheduled")
  redis.call("ZADD", queuePrefix .. "scheduled", 253402300799, taskId)
  redis.call("RPUSH", queuePrefix .. "lk:" .. limitKey, taskId)
  if redis.call("ZADD", queuePrefix .. "lkeys", "NX", math.floor(tonumber(now) / 1000000), limitKey) == 1 then
    redis.call("SADD", queuePrefix .. "keyindex", "l:" .. limitKey)
    redis.call("PUBLISH", "effect-asynq:wake", string.match(pendingKey, "{(.*)}:pending$"))
  end
  return 1
end
redis.call("RPUSH", pendingKey, taskId)
redis.call("HSET", taskKey, "state", "pending", "pending_since", now)
return 1
