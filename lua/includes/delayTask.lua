-- includes/delayTask.lua: puts a task id in the scheduled or retry zset for a due time in unix
-- milliseconds, keeping asynq's format and our precision:
--   - the asynq zset (scheduled or retry) gets whole unix seconds, rounded UP: asynq's Inspector
--     (its CLI, asynqmon) reads a score as an integer (a fractional one fails its parsing), and a
--     Go asynq server, which forwards when score <= now in whole seconds, then never runs the task
--     early (a task due at 10.4 s is forwarded by Go at 11 s);
--   - when the due time has a sub-second part, asynq:{q}:due_ms (not asynq's) gets the exact time
--     (score: unix ms), which effect-asynq's forwarder reads (lua/forward.lua); a whole-second due
--     time leaves no entry there (an old one of the same id is removed);
--   - when this task is now the earliest due one of its queue (earlier than every scheduled, retry
--     and due_ms head before the write), "<due ms> <queue>" is published on "effect-asynq:forward",
--     so effect-asynq forwarders that planned to look later wake up for it (edge-triggered: a task
--     behind an earlier one costs no message; PUBLISH touches no key, so it is cluster-safe).
-- All keys are derived from the queue's key prefix, inside the queue's {q} slot.
-- Defines earliestDueMs(queuePrefix): the earliest due time (unix ms) of the queue's scheduled and
--   retry tasks (heads of scheduled and retry x 1000, and of due_ms), or nil when there is none.
-- Defines delayTask(queuePrefix, zsetKey, taskId, dueMs, queueName)
--   queuePrefix   asynq:{q}:
--   zsetKey       asynq:{q}:scheduled or asynq:{q}:retry
--   taskId        the task's id
--   dueMs         the due time, unix ms (number or decimal string)
--   queueName     the queue's name (the wake-up message)
-- Returns nothing.
local function earliestDueMs(queuePrefix)
  local best = nil
  for _, name in ipairs({"scheduled", "retry", "due_ms"}) do
    local head = redis.call("ZRANGE", queuePrefix .. name, 0, 0, "WITHSCORES")
    local score = tonumber(head[2])
    if score then
      if name ~= "due_ms" then
        score = score * 1000
      end
      if best == nil or score < best then
        best = score
      end
    end
  end
  return best
end
local function delayTask(queuePrefix, zsetKey, taskId, dueMs, queueName)
  local due = tonumber(dueMs)
  local earliest = earliestDueMs(queuePrefix)
  redis.call("ZADD", zsetKey, math.ceil(due / 1000), taskId)
  if due % 1000 ~= 0 then
    redis.call("ZADD", queuePrefix .. "due_ms", string.format("%.17g", due), taskId)
  else
    redis.call("ZREM", queuePrefix .. "due_ms", taskId)
  end
  if earliest == nil or due < earliest then
    redis.call("PUBLISH", "effect-asynq:forward", string.format("%.17g", due) .. " " .. queueName)
  end
end
