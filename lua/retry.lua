-- retry: active -> retry (zset score = retry time in whole seconds rounded up, the exact time in
-- asynq:{q}:due_ms when it has a sub-second part, a wake-up for the forwarders when it is the
-- queue's earliest due task: includes/delayTask.lua), msg rewritten (retried, error_msg,
-- last_failed_at), state "retry". When ARGV[5] = "1" (a failure) the task counts as processed and
-- failed (daily keys with expiry, and totals). With ARGV[6] set (recovery of an expired lease) the
-- move happens only while the lease score is still <= ARGV[6], so two recoverers never both move
-- it, and a task re-leased in the meantime is left alone.
-- KEYS[1] asynq:{q}:t:                     (task key prefix)
-- KEYS[2] asynq:{q}:active
-- KEYS[3] asynq:{q}:lease
-- KEYS[4] asynq:{q}:retry
-- KEYS[5] asynq:{q}:processed:<yyyy-mm-dd>  (UTC date of now)
-- KEYS[6] asynq:{q}:failed:<yyyy-mm-dd>
-- KEYS[7] asynq:{q}:processed
-- KEYS[8] asynq:{q}:failed
-- ARGV[1] task id
-- ARGV[2] encoded TaskMessage (already updated)
-- ARGV[3] retry at, unix ms (decimal string)
-- ARGV[4] daily stat key expiry, unix seconds
-- ARGV[5] "1" when the attempt counts as a failure, else "0"
-- ARGV[6] lease cutoff, unix seconds, or "" (the caller holds the lease)
-- ARGV[7] queue name (the wake-up message)
-- Returns: 1 done; 2 already done by this very call (ARGV[6] = "": the task is in the retry set
-- holding exactly ARGV[2] — a resend of a call that ran but whose reply was lost; nothing is
-- written or counted again); 0 the task is not active under a (matching) lease (nothing was
-- changed, except that a lease entry for a task missing from the active list is removed as stale).
--- @include "includes/leaveActive.lua"
--- @include "includes/countDone.lua"
--- @include "includes/delayTask.lua"
local taskKeyPrefix, activeKey, leaseKey, retryKey,
  processedDayKey, failedDayKey, processedTotalKey, failedTotalKey = unpack(KEYS)
local taskId, msg, retryAtMs, statExpireAt, countsAsFailure, leaseCutoff, queueName = unpack(ARGV)
if not leaveActive(activeKey, leaseKey, taskId, leaseCutoff, true) then
  if leaseCutoff == "" and redis.call("HGET", taskKeyPrefix .. taskId, "msg") == msg and redis.call("ZSCORE", retryKey, taskId) then
    return 2
  end
  return 0
end
delayTask(string.sub(retryKey, 1, -6), retryKey, taskId, retryAtMs, queueName)
redis.call("HSET", taskKeyPrefix .. taskId, "msg", msg, "state", "retry")
if countsAsFailure == "1" then
  countDone(statExpireAt, processedDayKey, processedTotalKey, failedDayKey, failedTotalKey)
end
return 1
