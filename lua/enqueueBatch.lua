-- enqueueBatch: enqueue (lua/enqueue.lua) for several new tasks of one queue in one call, in order:
-- each task's checks, lock and hash as enqueue does them, and the ids written LPUSHed on the pending
-- list together at the end (the same list order as one push per task; the queue name is published
-- on "effect-asynq:wake" when the push makes the list non-empty). A later task with the id or the
-- uniqueness lock of an earlier one in the same call is refused as it would be in a later call
-- (unless it is the same message, includes/sameTaskMessage.lua: the same write, no second task). Commands: EXISTS and
-- HSET per task (and what a lock needs), one LPUSH for the call.
-- KEYS[1]  task key prefix              asynq:{<q>}:t:   (task key = KEYS[1] .. id)
-- KEYS[2]  pending list                 asynq:{<q>}:pending
-- KEYS[3..] the uniqueness locks of the tasks that take one, in task order
--           asynq:{<q>}:unique:<type>:<md5(payload)>
-- ARGV[1]  pending_since: unix time in nanoseconds (decimal string), for every task
-- ARGV[2]  queue name (the wake message)
-- ARGV[3]  n, the number of tasks
-- ARGV[4 .. 3+2n]  two entries per task: task id, encoded TaskMessage
-- ARGV[4+2n ..]    two entries per task that takes a uniqueness lock, in task order: the task's
--                  number (1..n), the lock TTL in milliseconds (>= 1); the j-th such task's lock is
--                  KEYS[2+j]
-- Returns  an array with one code per task, in order, as enqueue's reply: 1 enqueued (or the same
--          write done before), 0 a different task with this id exists, -1 the lock is held by
--          another task (nothing written for that task).
--- @include "includes/newTask.lua"
--- @include "includes/writePendingTask.lua"
local taskKeyPrefix, pendingKey = unpack(KEYS)
local pendingSince, queueName, taskCount = unpack(ARGV)
local n = tonumber(taskCount)
local results = {}
local pushed = {}
-- Where the next locked task's entries are, and its number (0: no more locks).
local lockAt = 4 + 2 * n
local nextLocked = tonumber(ARGV[lockAt]) or 0
local lockNumber = 0
for t = 1, n do
  local at = 2 + 2 * t
  local taskId, msg = ARGV[at], ARGV[at + 1]
  local lockKey, lockTtlMs = nil, nil
  if t == nextLocked then
    lockNumber = lockNumber + 1
    lockKey, lockTtlMs = KEYS[lockNumber + 2], ARGV[lockAt + 1]
    lockAt = lockAt + 2
    nextLocked = tonumber(ARGV[lockAt]) or 0
  end
  local taskKey = taskKeyPrefix .. taskId
  results[t] = addNewTask(taskKey, taskId, msg, lockKey, lockTtlMs, function()
    writePendingHash(taskKey, msg, pendingSince, lockKey)
    pushed[#pushed + 1] = taskId
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
