-- enqueueBatch: enqueue (lua/enqueue.lua) for several new tasks of one queue in one call, in order:
-- each task's checks, lock and hash as enqueue does them, and the ids written LPUSHed on the pending
-- list together at the end (the same list order as one push per task; the queue name is published
-- on "effect-asynq:wake" when the push makes the list non-empty). A later task with the id or the
-- uniqueness lock of an earlier one in the same call is refused as it would be in a later call
-- (unless it is exactly the same message: the same write, no second task). Commands: EXISTS and
-- HSET per task (and what a lock needs), one LPUSH for the call.
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. id)
-- KEYS[2]  pending list                 asynq:{<q>}:pending
-- KEYS[3..] the tasks' uniqueness locks  asynq:{<q>}:unique:<type>:<md5(payload)> (lock index 1 is KEYS[3])
-- ARGV[1]  pending_since: unix time in nanoseconds (decimal string), for every task
-- ARGV[2]  queue name (the wake message)
-- ARGV[3..] four entries per task: task id, encoded TaskMessage, index of its uniqueness lock among
--          KEYS[3..] (0: none), lock TTL in milliseconds (>= 1; 0 without a lock)
-- Returns  an array with one code per task, in order, as enqueue's reply: 1 enqueued (or the same
--          write done before), 0 a different task with this id exists, -1 the lock is held by
--          another task (nothing written for that task).
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
local taskKeyPrefix, pendingKey = unpack(KEYS)
local pendingSince, queueName = unpack(ARGV)
local results = {}
local pushed = {}
for t = 1, (#ARGV - 2) / 4 do
  local at = t * 4 - 1
  local taskId, msg, lockIndex, lockTtlMs = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2]), ARGV[at + 3]
  local lockKey = nil
  if lockIndex > 0 then
    lockKey = KEYS[lockIndex + 2]
  end
  local taskKey = taskKeyPrefix .. taskId
  results[t] = addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
    writePendingHash(taskKey, msg, pendingSince, lockKey)
    table.insert(pushed, taskId)
  end)
end
local length = 0
for i = 1, #pushed, 1000 do
  length = redis.call("LPUSH", pendingKey, unpack(pushed, i, math.min(i + 999, #pushed)))
end
if #pushed > 0 and length == #pushed then
  redis.call("PUBLISH", "effect-asynq:wake", queueName)
end
return results
