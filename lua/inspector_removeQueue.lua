-- inspector_removeQueue: deletes a queue's keys (asynq's RemoveQueue), never while a task is
-- active. Without force the queue must hold no task at all. With force, each call deletes up to
-- ARGV[2] tasks (hashes, ids and the uniqueness locks they hold; lists from the tail, zsets lowest
-- score first) and says how many are left; the caller calls again until the queue is empty, then
-- the structure keys are deleted.
-- (asynq:queues is a global key outside the queue's slot: the caller removes the name there.)
-- KEYS[1]  asynq:{q}:pending
-- KEYS[2]  asynq:{q}:active
-- KEYS[3]  asynq:{q}:scheduled
-- KEYS[4]  asynq:{q}:retry
-- KEYS[5]  asynq:{q}:archived
-- KEYS[6]  asynq:{q}:completed
-- KEYS[7]  asynq:{q}:lease
-- KEYS[8]  asynq:{q}:groups
-- KEYS[9]  asynq:{q}:aggregation_sets
-- KEYS[10] asynq:{q}:paused
-- KEYS[11] asynq:{q}:t:   (task key prefix)
-- KEYS[12] asynq:{q}:g:   (group and aggregation-set key prefix)
-- KEYS[13] asynq:{q}:unique:   (a deleted task's uniqueness lock is released; only keys under it)
-- ARGV[1] "1" force, "0" only when empty
-- ARGV[2] batch size (> 0)
-- Returns {1, deleted in this call} removed; {0, left} a batch was deleted, call again; {-1, tasks} not empty
-- (no force); {-2, active} tasks are active; nothing is changed in the last two cases.
local active = redis.call("LLEN", KEYS[2])
if active > 0 then
  return {-2, active}
end
local groups = redis.call("SMEMBERS", KEYS[8])
local sets = redis.call("ZRANGE", KEYS[9], 0, -1)
local function inSlot(key)
  return string.sub(key, 1, #KEYS[12]) == KEYS[12]
end
local total = redis.call("LLEN", KEYS[1])
for i = 3, 6 do
  total = total + redis.call("ZCARD", KEYS[i])
end
for _, g in ipairs(groups) do
  total = total + redis.call("ZCARD", KEYS[12] .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    total = total + redis.call("ZCARD", s)
  end
end
if total > 0 and ARGV[1] ~= "1" then
  return {-1, total}
end
local budget = tonumber(ARGV[2])
local function forget(ids)
  for _, id in ipairs(ids) do
    local key = KEYS[11] .. id
    local ukey = redis.call("HGET", key, "unique_key")
    if ukey and string.sub(ukey, 1, #KEYS[13]) == KEYS[13] and redis.call("GET", ukey) == id then
      redis.call("DEL", ukey)
    end
    redis.call("DEL", key)
  end
  budget = budget - #ids
end
local function drainZset(key)
  if budget <= 0 then return end
  local ids = redis.call("ZRANGE", key, 0, budget - 1)
  if #ids > 0 then
    redis.call("ZREM", key, unpack(ids))
    forget(ids)
  end
end
if budget > 0 and total > 0 then
  forget(redis.call("RPOP", KEYS[1], budget) or {})
end
for i = 3, 6 do
  drainZset(KEYS[i])
end
for _, g in ipairs(groups) do
  drainZset(KEYS[12] .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    drainZset(s)
  end
end
local deleted = tonumber(ARGV[2]) - budget
if deleted > 0 and deleted < total then
  return {0, total - deleted}
end
for i = 1, 10 do
  redis.call("DEL", KEYS[i])
end
for _, g in ipairs(groups) do
  redis.call("DEL", KEYS[12] .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    redis.call("DEL", s)
  end
end
return {1, deleted}
