-- scheduler_record: gives a periodic entry that has no record yet its starting point, and reads
-- every record field. Occurrences at or before `through` are never enqueued, so a new entry starts
-- with through = now - lookback: the long-lived scheduler passes lookback 0 (only occurrences after
-- registration run), a cron-function tick a window (so an occurrence at 12:00:00 still runs when
-- the first invocation starts at 12:00:00.8). An existing record is left as it is (HSETNX).
--
-- KEYS[1]  entry record (hash)   asynq:{<q>}:scheduler:<entryId>
-- ARGV[1]  through for a new record, unix ms
-- ARGV[2]  record TTL, ms (set only when the record is created)
--
-- Returns {through, prev or false, task or false}
local recordKey = KEYS[1]
local initialThrough, recordTtlMs = unpack(ARGV)
if redis.call("HSETNX", recordKey, "through", initialThrough) == 1 then
  redis.call("PEXPIRE", recordKey, recordTtlMs)
end
return redis.call("HMGET", recordKey, "through", "prev", "task")
