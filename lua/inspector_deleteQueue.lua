-- inspector_deleteQueue: deletes a queue's keys (asynq's RemoveQueue), never while a task is
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
-- KEYS[14] asynq:{q}:parked    (not asynq's: park tokens of idle effect-asynq workers)
-- KEYS[15] asynq:{q}:parkroom  (not asynq's: how many tasks each of them may still be handed)
-- KEYS[16] asynq:{q}:due_ms    (not asynq's: exact due times of scheduled and retry tasks)
-- KEYS[17] asynq:{q}:handover  (not asynq's: hand-overs not yet confirmed by their worker)
-- KEYS[18] asynq:{q}:flow      (not asynq's: the queue's flow-control limit)
-- ARGV[1] "1" force, "0" only when empty
-- ARGV[2] batch size (> 0)
-- Returns {1, deleted in this call} removed; {0, left} a batch was deleted, call again; {-1, tasks} not empty
-- (no force); {-2, active} tasks are active; nothing is changed in the last two cases.
--- @include "includes/batchSource.lua"
--- @include "includes/deleteTaskHash.lua"
local pendingKey, activeKey, scheduledKey, retryKey, archivedKey, completedKey,
  leaseKey, groupsKey, aggregationSetsKey, pausedKey,
  taskKeyPrefix, groupKeyPrefix, lockPrefix, parkedKey, parkRoomKey, dueKey, handoverKey, flowKey = unpack(KEYS)
local force, batchSize = unpack(ARGV)
batchSize = tonumber(batchSize)
local stateZsets = {scheduledKey, retryKey, archivedKey, completedKey}
local structureKeys = {
  pendingKey, activeKey, scheduledKey, retryKey, archivedKey, completedKey,
  leaseKey, groupsKey, aggregationSetsKey, pausedKey, parkedKey, parkRoomKey, dueKey, handoverKey, flowKey
}
local active = redis.call("LLEN", activeKey)
if active > 0 then
  return {-2, active}
end
local groups = redis.call("SMEMBERS", groupsKey)
local sets = redis.call("ZRANGE", aggregationSetsKey, 0, -1)
local function inSlot(key)
  return string.sub(key, 1, #groupKeyPrefix) == groupKeyPrefix
end
local total = redis.call("LLEN", pendingKey)
for _, key in ipairs(stateZsets) do
  total = total + redis.call("ZCARD", key)
end
for _, g in ipairs(groups) do
  total = total + redis.call("ZCARD", groupKeyPrefix .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    total = total + redis.call("ZCARD", s)
  end
end
if total > 0 and force ~= "1" then
  return {-1, total}
end
local budget = batchSize
local function forget(ids)
  for _, id in ipairs(ids) do
    deleteTaskHash(taskKeyPrefix .. id, id, lockPrefix)
  end
  budget = budget - #ids
end
local function drainZset(key)
  if budget > 0 then
    forget(takeBatch(key, "zset", budget))
  end
end
if budget > 0 and total > 0 then
  forget(takeBatch(pendingKey, "list", budget))
end
for _, key in ipairs(stateZsets) do
  drainZset(key)
end
for _, g in ipairs(groups) do
  drainZset(groupKeyPrefix .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    drainZset(s)
  end
end
local deleted = batchSize - budget
if deleted > 0 and deleted < total then
  return {0, total - deleted}
end
for _, key in ipairs(structureKeys) do
  redis.call("DEL", key)
end
for _, g in ipairs(groups) do
  redis.call("DEL", groupKeyPrefix .. g)
end
for _, s in ipairs(sets) do
  if inSlot(s) then
    redis.call("DEL", s)
  end
end
return {1, deleted}
