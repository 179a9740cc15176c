-- releaseLimitKey: a keyed task left active (not asynq's; includes/keyLimits.lua): its id leaves
-- the key's set of leased ids, and when the key still has waiting tasks it is brought forward in
-- the ring to now (a key held back by its concurrency is looked at again at once; a key that a
-- rate holds back is put back at its allowance by the next lease) and the queue name is published
-- on "effect-asynq:wake", so idle workers look. Sent by the worker that ran the task, after its
-- outcome was written; harmless when repeated or when the task was never leased under the key.
-- A key left with no waiting task, no leased id and no rate state leaves the queue's index of
-- per-key keys (asynq:{q}:keyindex, includes/keyLimits.lua).
-- KEYS[1] asynq:{q}:lka:<limit key>  (the key's leased ids)
-- KEYS[2] asynq:{q}:lk:<limit key>   (the key's waiting ids)
-- KEYS[3] asynq:{q}:lkeys            (the ring of keys with waiting tasks)
-- KEYS[4] asynq:{q}:lkt:<limit key>  (the key's rate state)
-- KEYS[5] asynq:{q}:keyindex         (the index of per-key keys)
-- ARGV[1] task id
-- ARGV[2] the limit key
-- ARGV[3] now, unix ms
-- ARGV[4] queue name (the wake message)
-- Returns: 1 the key was brought forward; 0 nothing to bring forward.
local setKey, listKey, ringKey, rateKey, indexKey = unpack(KEYS)
local taskId, limitKey, nowMs, queueName = unpack(ARGV)
redis.call("SREM", setKey, taskId)
if redis.call("EXISTS", listKey) == 0 then
  if redis.call("EXISTS", setKey, rateKey) == 0 then
    redis.call("SREM", indexKey, "l:" .. limitKey)
  end
  return 0
end
local score = tonumber(redis.call("ZSCORE", ringKey, limitKey))
if score and score <= tonumber(nowMs) then
  return 0
end
redis.call("ZADD", ringKey, nowMs, limitKey)
redis.call("PUBLISH", "effect-asynq:wake", queueName)
return 1
