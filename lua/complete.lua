-- complete: active -> deleted (ARGV[3] = "delete") or active -> completed (ARGV[3] = "keep",
-- kept for its retention: completed zset score = completed_at + retention, msg rewritten with
-- completed_at). Counts the task as processed (daily key with expiry, and the total). Releases the
-- uniqueness lock only while it still holds this task's id.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:completed
-- KEYS[4] asynq:{q}:t:                    (task key prefix)
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd> (UTC date of now)
-- KEYS[6] asynq:{q}:processed
-- KEYS[7] asynq:{q}:unique:<...>          (optional: the task's uniqueness lock)
-- ARGV[1] task id
-- ARGV[2] daily stat key expiry, unix seconds
-- ARGV[3] "delete" | "keep"
-- ARGV[4] completed zset score (expiry of the retained task), unix seconds ("keep" only)
-- ARGV[5] encoded TaskMessage with completed_at set ("keep" only)
-- Returns: 1 done; 2 already done (the task is no longer active and is completed, "keep", or gone,
-- "delete": this is a resend of a call that ran but whose reply was lost, e.g. ioredis resending
-- the EVALSHA after a reconnect; nothing is written or counted again); 0 the task is not active
-- under a lease and not finished either (nothing was changed). The "already done" check runs only
-- when the task was not active, so the usual path costs nothing more.
--- @include "includes/leaveActive.lua"
--- @include "includes/countDone.lua"
--- @include "includes/releaseUniqueLock.lua"
local activeKey, leaseKey, completedKey, taskKeyPrefix,
  processedDayKey, processedTotalKey, lockKey = unpack(KEYS)
local taskId, statExpireAt, disposal, retainUntil, completedMsg = unpack(ARGV)
local taskKey = taskKeyPrefix .. taskId
if not leaveActive(activeKey, leaseKey, taskId, "", false) then
  if disposal == "keep" then
    if redis.call("HGET", taskKey, "state") == "completed" and redis.call("ZSCORE", completedKey, taskId) then
      return 2
    end
  elseif redis.call("EXISTS", taskKey) == 0 then
    return 2
  end
  return 0
end
if disposal == "keep" then
  redis.call("ZADD", completedKey, retainUntil, taskId)
  redis.call("HSET", taskKey, "msg", completedMsg, "state", "completed")
else
  redis.call("DEL", taskKey)
end
countDone(statExpireAt, processedDayKey, processedTotalKey, nil, nil)
releaseUniqueLock(lockKey, taskId, nil)
return 1
