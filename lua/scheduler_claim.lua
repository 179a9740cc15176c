-- scheduler_claim: claims one occurrence of a periodic entry and enqueues its task, atomically
-- (exactly once across any number of scheduler instances and overlapping cron-function ticks).
-- The entry's record (a hash in the queue's cluster slot, so the claim and the task write are one
-- script) says through which occurrence the entry is done. An occurrence at or before `through`
-- is refused and nothing is written; a later one advances `through` and writes the task as the
-- enqueue / schedule / addToGroup scripts do. If the task write itself is refused (uniqueness lock
-- held, custom task id taken), the occurrence still counts as handled, so no other instance
-- retries it. A generated id (ARGV[10] = "1") that is taken leaves the occurrence unclaimed
-- (code 2): the caller draws another id and calls again.
--
-- KEYS[1]  entry record (hash)          asynq:{<q>}:scheduler:<entryId>
--          fields: through = last handled occurrence (unix ms), prev = last occurrence that
--          enqueued a task (unix ms), task = that task's id
-- KEYS[2]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[2] .. ARGV[3])
-- KEYS[3]  target: pending list asynq:{<q>}:pending | scheduled zset asynq:{<q>}:scheduled |
--          group zset asynq:{<q>}:g:<group>
-- KEYS[4]  groups set                   asynq:{<q>}:groups (written only in mode "aggregating")
-- KEYS[5]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  occurrence, unix ms
-- ARGV[2]  record TTL, ms
-- ARGV[3]  task id
-- ARGV[4]  encoded TaskMessage (protobuf bytes)
-- ARGV[5]  mode: "pending" | "scheduled" | "aggregating"
-- ARGV[6]  pending: pending_since, unix ns (string); scheduled: process-at, unix ms;
--          aggregating: now, unix s (the group zset score)
-- ARGV[7]  group name (mode "aggregating"), else ""
-- ARGV[8]  queue name, published on the channel "effect-asynq:wake" when a pending task makes the
--          pending list non-empty (as lua/enqueue.lua does), so idle workers wake at once, and on
--          "effect-asynq:forward" when a scheduled task is its queue's earliest (delayTask.lua)
-- ARGV[9]  lock TTL in milliseconds (>= 1) with KEYS[5]; "0" without
-- ARGV[10] "1" when the task id was generated (taken → code 2, nothing written), "0" for a custom id
--
-- Returns {code, through}: code  1 task written
--                                2 generated task id already exists: nothing written, not claimed
--                                0 occurrence handled, custom task id already exists (nothing else written)
--                               -1 occurrence handled, uniqueness lock held (nothing else written)
--                               -2 occurrence already handled by someone (nothing written)
--          through = the record's `through` after the call (string)
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
--- @include "includes/writeScheduledTask.lua"
--- @include "includes/writeAggregatingTask.lua"
local recordKey, taskKeyPrefix, targetKey, groupsKey, lockKey = unpack(KEYS)
local occurrence, recordTtlMs, taskId, msg, mode, score,
  groupName, queueName, lockTtlMs, generatedId = unpack(ARGV)
local through = tonumber(redis.call("HGET", recordKey, "through") or "-1")
if through >= tonumber(occurrence) then
  return {-2, tostring(through)}
end
local taskKey = taskKeyPrefix .. taskId
if generatedId == "1" and redis.call("EXISTS", taskKey) == 1 then
  return {2, tostring(through)}
end
redis.call("HSET", recordKey, "through", occurrence)
redis.call("PEXPIRE", recordKey, recordTtlMs)
local refusal = newTaskRefusal(taskKey, lockKey)
if refusal then
  return {refusal, occurrence}
end
redis.call("HSET", recordKey, "prev", occurrence, "task", taskId)
takeUniqueLock(lockKey, taskId, lockTtlMs)
if mode == "pending" then
  writePendingTask(taskKey, taskId, msg, score, lockKey, targetKey, queueName)
elseif mode == "scheduled" then
  writeScheduledTask(taskKey, taskId, msg, score, lockKey, targetKey, queueName)
elseif mode == "aggregating" then
  writeAggregatingTask(taskKey, taskId, msg, score, targetKey, groupsKey, groupName)
else
  return redis.error_reply("scheduler_claim: unknown mode " .. tostring(mode))
end
return {1, occurrence}
