-- includes/countDone.lua: counts one finished attempt in the queue's stats, as asynq does: the
-- daily keys (processed:<date>, failed:<date>) get the expiry when they are created, and the
-- totals (processed, failed) restart at 1 together when the processed total is at the int64
-- maximum 9223372036854775807 (asynq's GET-then-INCR; here INCR itself refuses exactly that value
-- with an overflow error, so one INCR does the same).
-- Defines countDone(statExpireAt, processedDayKey, processedTotalKey, failedDayKey, failedTotalKey)
--   statExpireAt       unix seconds: expiry of a daily key created now
--   processedDayKey    asynq:{q}:processed:<yyyy-mm-dd>
--   processedTotalKey  asynq:{q}:processed
--   failedDayKey       asynq:{q}:failed:<yyyy-mm-dd>, or nil when the attempt did not fail
--   failedTotalKey     asynq:{q}:failed, or nil when the attempt did not fail
-- Returns nothing. Any other INCR error (a counter that is not an integer) is raised.
local function countInDay(dayKey, statExpireAt)
  if redis.call("INCR", dayKey) == 1 then
    redis.call("EXPIREAT", dayKey, statExpireAt)
  end
end
local function countDone(statExpireAt, processedDayKey, processedTotalKey, failedDayKey, failedTotalKey)
  countInDay(processedDayKey, statExpireAt)
  if failedDayKey then
    countInDay(failedDayKey, statExpireAt)
  end
  local total = redis.pcall("INCR", processedTotalKey)
  if type(total) == "table" and total.err then
    if not string.find(total.err, "overflow", 1, true) then
      error(total)
    end
    redis.call("SET", processedTotalKey, 1)
    if failedTotalKey then
      redis.call("SET", failedTotalKey, 1)
    end
  elseif failedTotalKey then
    redis.call("INCR", failedTotalKey)
  end
end
