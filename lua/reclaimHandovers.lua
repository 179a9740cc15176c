-- reclaimHandovers: hand-overs not confirmed in time go back to pending, without counting as an
-- attempt. A hand-over (includes/pushToParked.lua) is recorded in KEYS[1] until its worker
-- confirms it, which a live worker does within a second (lua/confirmHandovers.lua); one still
-- there past its deadline went to a worker that stalled or died before it could. When its task is
-- still leased under exactly the hand-over's token (nobody extended it), it is taken off that
-- worker's hand-over list (LREM: a worker that wakes up later never sees it), out of active and
-- lease, and put back at the head of pending (RPUSH: the next dequeue takes it), state "pending",
-- pending_since = now. Otherwise (the task finished, failed, was given back, or its lease was
-- extended) only the record goes. At most ARGV[3] records per call, the earliest due first.
-- Run by every live effect-asynq worker that parks, once a second per queue (src/processor/handoverTick.ts).
-- KEYS[1] asynq:{q}:handover  (member: <token> "\n" <byte length of server id> "\n" <server id> <task id>;
--                              score: when it is due, unix ms)
-- KEYS[2] asynq:{q}:lease
-- KEYS[3] asynq:{q}:active
-- KEYS[4] asynq:{q}:pending
-- KEYS[5] asynq:{q}:t:   (task key prefix)
-- The hand-over lists asynq:{q}:push:<server id> are built from KEYS[4] (the queue's slot).
-- ARGV[1] now, unix nanoseconds (decimal string): records due at or before now are taken
-- ARGV[2] the queue's name (a hand-over list entry names it)
-- ARGV[3] most records to take (>= 1)
-- Returns: how many tasks went back to pending.
--- @include "includes/backToPending.lua"
local handoverKey, leaseKey, activeKey, pendingKey, taskKeyPrefix = unpack(KEYS)
local nowNanos, queueName, maxRecords = unpack(ARGV)
local base = string.sub(pendingKey, 1, -8)
local due = redis.call("ZRANGEBYSCORE", handoverKey, "-inf", math.floor(tonumber(nowNanos) / 1000000), "LIMIT", 0, tonumber(maxRecords))
local reclaimed = 0
for _, record in ipairs(due) do
  redis.call("ZREM", handoverKey, record)
  local tokenEnd = string.find(record, "\n", 1, true)
  local lengthEnd = tokenEnd and string.find(record, "\n", tokenEnd + 1, true)
  local serverLength = lengthEnd and tonumber(string.sub(record, tokenEnd + 1, lengthEnd - 1))
  -- A record that does not parse (damage) is only dropped.
  if serverLength then
    local token = string.sub(record, 1, tokenEnd - 1)
    local server = string.sub(record, lengthEnd + 1, lengthEnd + serverLength)
    local id = string.sub(record, lengthEnd + serverLength + 1)
    local score = redis.call("ZSCORE", leaseKey, id)
    if score and tonumber(score) == tonumber(token) then
      local msg = redis.call("HGET", taskKeyPrefix .. id, "msg")
      if msg then
        -- A list of the wrong type (damaged) is left alone: the worker's receiver deletes it.
        redis.pcall("LREM", base .. "push:" .. server, 1, token .. "\n" .. #queueName .. "\n" .. queueName .. #id .. "\n" .. id .. msg)
      end
      if backToPending(activeKey, leaseKey, pendingKey, taskKeyPrefix, id, nowNanos) then
        reclaimed = reclaimed + 1
      end
    end
  end
end
return reclaimed
