-- enqueueSigned: a signed HTTP enqueue request → its task, once per signature, atomically: the
-- request's record (one key per signature, in the queue's slot) and the task are written in one
-- step, so a request whose reply was lost can be sent again as is and gets the original answer.
-- No record yet: the task is written as enqueue / schedule / addToGroup write it (checks, lock,
-- then the write; a pending task is published on "effect-asynq:wake"), and the outcome is recorded
-- until the signature's window ends: ARGV[2] (the answer to give) when written, the refusal code
-- when refused. A record already there: nothing is written; the recorded outcome is returned.
--
-- KEYS[1]  request record (string)      asynq:{<q>}:signed:<signature hex>
-- KEYS[2]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[2] .. ARGV[3])
-- KEYS[3]  target: pending list asynq:{<q>}:pending | scheduled zset asynq:{<q>}:scheduled |
--          group zset asynq:{<q>}:g:<group>
-- KEYS[4]  groups set                   asynq:{<q>}:groups (written only in mode "aggregating")
-- KEYS[5]  (optional) uniqueness lock   asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  record TTL, ms (>= 1)
-- ARGV[2]  the answer to record when the task is written (the caller's text, e.g. its JSON)
-- ARGV[3]  task id
-- ARGV[4]  encoded TaskMessage (protobuf bytes)
-- ARGV[5]  mode: "pending" | "scheduled" | "aggregating"
-- ARGV[6]  pending: pending_since, unix ns (string); scheduled: process-at, unix s;
--          aggregating: now, unix s (the group zset score)
-- ARGV[7]  group name (mode "aggregating"), else ""
-- ARGV[8]  queue name (the wake message)
-- ARGV[9]  lock TTL in milliseconds (>= 1) with KEYS[5]; "0" without
--
-- Returns {code, recorded}: code  1 task written now; recorded = ARGV[2]
--                                 0 a task with this id exists: refused now, nothing written but the record
--                                -1 the uniqueness lock is held: refused now, nothing written but the record
--                                 2 a replay: nothing written; recorded = the first call's record
--                                   (its answer, or "refused:0" / "refused:-1")
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
--- @include "includes/writeScheduledTask.lua"
--- @include "includes/writeAggregatingTask.lua"
local recordKey, taskKeyPrefix, targetKey, groupsKey, lockKey = unpack(KEYS)
local recordTtlMs, answer, taskId, msg, mode, score, groupName, queueName, lockTtlMs = unpack(ARGV)
local recorded = redis.call("GET", recordKey)
if recorded then
  return {2, recorded}
end
if mode ~= "pending" and mode ~= "scheduled" and mode ~= "aggregating" then
  return redis.error_reply("enqueueSigned: unknown mode " .. tostring(mode))
end
local taskKey = taskKeyPrefix .. taskId
local code = addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
  if mode == "pending" then
    writePendingTask(taskKey, taskId, msg, score, lockKey, targetKey, queueName)
  elseif mode == "scheduled" then
    writeScheduledTask(taskKey, taskId, msg, score, lockKey, targetKey)
  else
    writeAggregatingTask(taskKey, taskId, msg, score, targetKey, groupsKey, groupName)
  end
end)
if code == 1 then
  redis.call("SET", recordKey, answer, "PX", recordTtlMs)
  return {1, answer}
end
redis.call("SET", recordKey, "refused:" .. code, "PX", recordTtlMs)
return {code, ""}
