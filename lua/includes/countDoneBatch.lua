-- includes/countDoneBatch.lua: counts n successful attempts of one queue at once, as n calls of
-- countDone (includes/countDone.lua) without a failure would: the daily key processed:<date> gets
-- its expiry when this call created it, and the total restarts at 1 when it passes the int64
-- maximum (then counted one by one, so the restart lands exactly where n single counts put it).
-- Two commands for the batch (INCRBY each), plus EXPIREAT on the first count of a day.
-- Defines countDoneBatch(statExpireAt, processedDayKey, processedTotalKey, n)
--   statExpireAt       unix seconds: expiry of a daily key created now
--   processedDayKey    asynq:{q}:processed:<yyyy-mm-dd>
--   processedTotalKey  asynq:{q}:processed
--   n                  how many attempts to count (>= 1)
-- Returns nothing. Any other INCRBY error (a counter that is not an integer) is raised.
local function countDoneBatch(statExpireAt, processedDayKey, processedTotalKey, n)
  if redis.call("INCRBY", processedDayKey, n) == n then
    redis.call("EXPIREAT", processedDayKey, statExpireAt)
  end
  local total = redis.pcall("INCRBY", processedTotalKey, n)
  if type(total) == "table" and total.err then
    if not string.find(total.err, "overflow", 1, true) then
      error(total)
    end
    for _ = 1, n do
      local one = redis.pcall("INCR", processedTotalKey)
      if type(one) == "table" and one.err then
        if not string.find(one.err, "overflow", 1, true) then
          error(one)
        end
        redis.call("SET", processedTotalKey, 1)
      end
    end
  end
end
