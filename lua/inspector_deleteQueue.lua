-- inspector_deleteQueue: deletes a queue's keys (asynq's RemoveQueue), never while a task is
-- active. Without force the queue must hold no task at all. With force, each call deletes up to
-- ARGV[2] tasks (hashes, ids and the uniqueness locks they hold; lists from the tail, zsets lowest
-- score first) and says how many are left; the caller calls again until the queue is empty, then
-- the structure keys are deleted. Before them go the queue's per-key keys (not asynq's), at most
-- ARGV[2] names per call: for each limit key in the ring KEYS[19] or named "l:<key>" in the index
-- KEYS[20], its list lk:<key>, leased set lka:<key> and rate state lkt:<key>; for each "k:<key>"
-- of the index, the keep-last key keeplast:<key> (all built from the queue prefix: same slot).
-- The index is what finds a key the ring no longer names (a leased set or a rate state left by a
-- key with no waiting task, a keep-last key); never a scan of the keyspace.
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
-- KEYS[18] asynq:{q}:flow      (not asynq's: the queue's flow-control limit and hold)
-- KEYS[19] asynq:{q}:lkeys     (not asynq's: the ring of limit keys with waiting tasks)
-- KEYS[20] asynq:{q}:keyindex  (not asynq's: the index of per-key keys)
-- ARGV[1] "1" force, "0" only when empty
-- ARGV[2] batch size (> 0)
-- Returns {1, deleted in this call} removed; {0, left} a batch was deleted, call again; {2, names
-- left} every task is deleted and a batch of per-key names was, call again; {-1, tasks} not empty
-- (no force); {-2, active} tasks are active; nothing is changed in the last two cases.
--- @include "includes/batchSource.lua"
--- @include "includes/deleteTaskHash.lua"
local pendingKey, activeKey, scheduledKey, retryKey, archivedKey, completedKey,
  leaseKey, groupsKey, aggregationSetsKey, pausedKey,
  taskKeyPrefix, groupKeyPrefix, lockPrefix, parkedKey, parkRoomKey, dueKey, handoverKey, flowKey,
  ringKey, indexKey = unpack(KEYS)
local force, batchSize = unpack(ARGV)
batchSize = tonumber(batchSize)
local stateZsets = {scheduledKey, retryKey, archivedKey, completedKey}
local structureKeys = {
  pendingKey, activeKey, scheduledKey, retryKey, archivedKey, completedKey,
  leaseKey, groupsKey, aggregationSetsKey, pausedKey, parkedKey, parkRoomKey, dueKey, handoverKey, flowKey,
  ringKey, indexKey
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
local queuePrefix = string.sub(taskKeyPrefix, 1, -3)
local function dropLimitKey(name)
  redis.call("DEL", queuePrefix .. "lk:" .. name, queuePrefix .. "lka:" .. name, queuePrefix .. "lkt:" .. name)
end
local ringNames = redis.call("ZRANGE", ringKey, 0, batchSize - 1)
for _, name in ipairs(ringNames) do
  dropLimitKey(name)
end
if #ringNames > 0 then
  redis.call("ZREM", ringKey, unpack(ringNames))
end
if #ringNames < batchSize then
  for _, member in ipairs(redis.call("SPOP", indexKey, batchSize - #ringNames)) do
    local kind, name = string.sub(member, 1, 2), string.sub(member, 3)
    if kind == "l:" then
      dropLimitKey(name)
    elseif kind == "k:" then
      redis.call("DEL", queuePrefix .. "keeplast:" .. name)
    end
  end
end
local namesLeft = redis.call("ZCARD", ringKey) + redis.call("SCARD", indexKey)
if namesLeft > 0 then
  return {2, namesLeft}
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
