-- enqueueDebounced: a new task -> scheduled, due a window from now, replacing the task this debounce
-- key scheduled before while that one is still scheduled (debounce: the last enqueue of a burst
-- wins and runs once, a window after the burst's last enqueue). The debounce key (not asynq's)
-- holds the id of the key's latest task. A replaced task is removed (hash, scheduled zset, due_ms);
-- one that is no longer scheduled (forwarded, running, done) is left alone and the new task is
-- scheduled after it. The task itself is an ordinary scheduled task (any asynq forwarder moves it).
-- KEYS[1] task key prefix   asynq:{<q>}:t:   (task key = KEYS[1] .. ARGV[1])
-- KEYS[2] scheduled zset    asynq:{<q>}:scheduled
-- KEYS[3] debounce key      asynq:{<q>}:debounce:<key>
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (protobuf bytes)
-- ARGV[3] process-at time: now + the window, unix ms (decimal string)
-- ARGV[4] queue name (the forwarders' wake-up message)
-- ARGV[5] the debounce key's expiry, ms (the window and a margin)
-- Returns {1, 1} scheduled, an earlier task of the key replaced; {1, 0} scheduled, none replaced
-- (also a resend of this same call after its reply was lost); {0, 0} a different task with this id
-- already exists (nothing written).
--- @include "includes/newTask.lua"
--- @include "includes/writeScheduledTask.lua"
local taskKeyPrefix, scheduledKey, debounceKey = unpack(KEYS)
local taskId, msg, processAtMs, queueName, keyTtlMs = unpack(ARGV)
local current = redis.call("GET", debounceKey)
local replaced = 0
if current and current ~= taskId and redis.call("HGET", taskKeyPrefix .. current, "state") == "scheduled" then
  redis.call("ZREM", scheduledKey, current)
  redis.call("ZREM", string.sub(scheduledKey, 1, -10) .. "due_ms", current)
  redis.call("DEL", taskKeyPrefix .. current)
  replaced = 1
end
local taskKey = taskKeyPrefix .. taskId
local written = addNewTask(taskKey, taskId, msg, nil, nil, function()
  writeScheduledTask(taskKey, taskId, msg, processAtMs, nil, scheduledKey, queueName)
end)
if written == 1 then
  redis.call("SET", debounceKey, taskId, "PX", keyTtlMs)
end
return { written, replaced }
