-- confirmHandovers: a worker that parks says that it is alive and confirms the hand-overs it
-- received, once a second for each queue it serves, from its own event loop (src/processor/handoverTick.ts).
-- Sets its liveness mark KEYS[1] to expire after ARGV[1] ms: an enqueue hands this worker tasks
-- only while the mark exists (includes/pushToParked.lua), so a worker whose process is frozen or
-- whose event loop is blocked is handed nothing once it is gone, though its connections stay open.
-- Each hand-over named is taken out of asynq:{q}:handover, so it is not reclaimed
-- (lua/reclaimHandovers.lua); one still leased under exactly the token it was handed over with
-- (the worker received it and runs it) gets its lease moved to ARGV[3]: from here on the worker
-- holds it as if it had dequeued it. A hand-over that already went back to pending, finished or
-- was re-leased is not touched.
-- KEYS[1] asynq:{q}:alive:<server id>
-- KEYS[2] asynq:{q}:handover
-- KEYS[3] asynq:{q}:lease
-- ARGV[1] the liveness mark's lifetime, ms (>= 1)
-- ARGV[2] the worker's server id
-- ARGV[3] the new lease expiry, unix seconds
-- ARGV[4..] two entries per hand-over received since the last call: its token, its task id
-- Returns: the ids whose lease was moved to ARGV[3].
local aliveKey, handoverKey, leaseKey = unpack(KEYS)
local markTtlMs, server, expiry = ARGV[1], ARGV[2], ARGV[3]
redis.call("SET", aliveKey, "1", "PX", markTtlMs)
local serverPart = "\n" .. #server .. "\n" .. server
local held = {}
local firstHandoverArg = 4
for i = firstHandoverArg, #ARGV - 1, 2 do
  local token, id = ARGV[i], ARGV[i + 1]
  redis.call("ZREM", handoverKey, token .. serverPart .. id)
  local score = redis.call("ZSCORE", leaseKey, id)
  if score and tonumber(score) == tonumber(token) then
    redis.call("ZADD", leaseKey, "XX", expiry, id)
    table.insert(held, id)
  end
end
return held
