-- enqueueThrottled: a new task -> pending, unless this throttle key already let a task through in
-- its window (throttle: at most one task per key per window, the first one; the others are
-- dropped). The throttle key (not asynq's) holds "<window end, unix ms> <id of the window's task>";
-- the window is judged by the caller's clock (ARGV[6], so it is testable with TestClock), and the
-- key expires with the window (PX, only to clean up). Unlike a uniqueness lock it is not released
-- when the task completes. The task itself is
-- an ordinary pending task (any asynq server runs it). Its id is published on "effect-asynq:wake"
-- when it makes the pending list non-empty (includes/writePendingTask.lua).
-- KEYS[1] task key prefix   asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2] pending list      asynq:{<q>}:pending
-- KEYS[3] throttle key      asynq:{<q>}:throttle:<key>
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (protobuf bytes)
-- ARGV[3] pending_since: unix time in nanoseconds (decimal string)
-- ARGV[4] queue name (the wake-up message)
-- ARGV[5] the window, ms (>= 1)
-- ARGV[6] now, unix ms
-- Returns {1, id} enqueued (also a resend of this same call after its reply was lost: the key
-- names this id); {2, id of the window's task} throttled (nothing written); {0, id} a different
-- task with this id already exists (nothing written).
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
local taskKeyPrefix, pendingKey, throttleKey = unpack(KEYS)
local taskId, msg, pendingSince, queueName, windowMs, nowMs = unpack(ARGV)
local held = redis.call("GET", throttleKey)
if held then
  local windowEnd, holder = string.match(held, "^(%d+) (.*)$")
  if holder == taskId then
    return { 1, taskId }
  end
  if windowEnd and tonumber(windowEnd) > tonumber(nowMs) then
    return { 2, holder }
  end
end
local taskKey = taskKeyPrefix .. taskId
local written = addNewTask(taskKey, taskId, msg, nil, nil, function()
  writePendingTask(taskKey, taskId, msg, pendingSince, nil, pendingKey, queueName)
end)
if written == 1 then
  redis.call("SET", throttleKey, (tonumber(nowMs) + tonumber(windowMs)) .. " " .. taskId, "PX", windowMs)
end
return { written, taskId }
