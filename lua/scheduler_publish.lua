-- scheduler_publish: replaces the list of entries a scheduler instance runs (asynq's
-- writeSchedulerEntries): DEL, then LPUSH each SchedulerEntry in the order given (ascending next
-- run time, so the head is the entry due last, as asynq does), then an expiry. With no entries
-- the key is only deleted (shutdown).
--
-- KEYS[1]  entries list   asynq:schedulers:{<schedulerId>}
-- ARGV[1]  TTL, ms (asynq: 2 x heartbeat interval = 20 s)
-- ARGV[2..] SchedulerEntry protobuf bytes, ascending next run time
--
-- Returns the number of entries written
local entriesKey = KEYS[1]
local ttlMs = ARGV[1]
local firstEntryArg = 2
redis.call("DEL", entriesKey)
for i = firstEntryArg, #ARGV do
  redis.call("LPUSH", entriesKey, ARGV[i])
end
if #ARGV >= firstEntryArg then
  redis.call("PEXPIRE", entriesKey, ttlMs)
end
return #ARGV - firstEntryArg + 1
