-- releaseLeases: gives back to pending the tasks a dequeue leased to nobody. A dequeue whose reply
-- was lost (the connection dropped after the script ran; ioredis may then send it again and lease
-- more) leaves its tasks active under the lease score it was given, which is unique to that call
-- (just under the expiry second, with a random fraction). This takes every task leased under exactly that score,
-- except the ids the caller did receive, out of active and lease, and puts it back at the head of
-- pending (RPUSH: the next dequeue takes it), state "pending", pending_since = now.
-- KEYS[1] asynq:{q}:active
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:   (task key prefix)
-- ARGV[1] the dequeue's lease score (exactly as it was sent)
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3..] ids the caller received (kept)
-- Returns: how many tasks were given back.
--- @include "includes/backToPending.lua"
local activeKey, leaseKey, pendingKey, taskKeyPrefix = unpack(KEYS)
local callScore, now = unpack(ARGV)
local firstKeptIdArg = 3
local kept = {}
for i = firstKeptIdArg, #ARGV do
  kept[ARGV[i]] = true
end
local released = 0
for _, id in ipairs(redis.call("ZRANGEBYSCORE", leaseKey, callScore, callScore)) do
  if not kept[id] and backToPending(activeKey, leaseKey, pendingKey, taskKeyPrefix, id, now) then
    released = released + 1
  end
end
return released
