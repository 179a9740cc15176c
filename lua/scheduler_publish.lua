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
redis.call("DEL", KEYS[1])
for i = 2, #ARGV do
  redis.call("LPUSH", KEYS[1], ARGV[i])
end
if #ARGV > 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
return #ARGV - 1
