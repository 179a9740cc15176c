-- includes/pushToParked.lua: hands a new task straight to an idle effect-asynq worker instead of
-- the pending list, saving that worker the dequeue round trip. Never for a queue with a flow-control
-- limit (asynq:{q}:flow, includes/flowLimit.lua): its tasks are leased only by a dequeue, which
-- applies the limit (the enqueue then publishes its wake-up instead). A worker whose dequeue came back
-- short left a park token in asynq:{q}:parked (field: its server id, value: a lease score unique to
-- that park, see lua/dequeueLease.lua), and in asynq:{q}:parkroom how many tasks it may be handed
-- under it (the slots that dequeue left unfilled). Only when the queue has no pending task (FIFO
-- order is kept) and is not paused: the first usable token is used and the task is written as a
-- dequeue would leave it (state "active", in active, leased under the token's score), then pushed
-- on that worker's hand-over list asynq:{q}:push:<server id> as
--   <token> "\n" <byte length of queue> "\n" <queue> <byte length of id> "\n" <id> <msg>
-- and recorded in asynq:{q}:handover (a zset; member <token> "\n" <byte length of server id> "\n"
-- <server id> <id>, score: now + 5000, in ms) until the worker confirms it (lua/confirmHandovers.lua,
-- within a second while it runs); one still unconfirmed 5 s after the hand-over goes back to pending
-- without counting as an attempt (lua/reclaimHandovers.lua), so a worker that stalls right after it
-- was handed a task keeps it no more than a few seconds.
-- The token's room goes down by one: while some is left, the token stays (moved behind the other
-- workers' tokens, so parked workers take turns), and the worker needs no new dequeue to be handed
-- the next task; the last one removes it (a token without a room field, left by an earlier
-- version, is used once). The worker waits on that list with BLPOP on a connection of its own. A
-- list, not a PUBLISH: Redis answers a client blocked on a list before it writes the reply of the
-- command that pushed (here: the enqueue's caller), so the worker has the task a reply earlier.
-- A token is used only for a worker that is alive now and while its lease is safely ahead:
--   * its lease (the token's expiry second) ends at least 7 s after now (the hand-over's 5 s to be
--     confirmed, and the reclaim's tick, before the lease could ever run out);
--   * the worker's liveness mark asynq:{q}:alive:<server id> exists: the worker sets it from its
--     own event loop every second with a 3 s expiry (lua/confirmHandovers.lua), so a worker whose
--     process is frozen or whose event loop is blocked loses it within 3 s, though its
--     connections stay open;
--   * "effect-asynq:parked:<server id>" has a subscriber (PUBSUB NUMSUB; nothing is published
--     there): a worker that died closed its connections, and is skipped at once.
-- A token failing any of these is dropped with its room (as is a token that is not a number, a
-- damaged hash), and the next one is tried; when none is left nothing is written here. The list
-- expires a minute after the token's lease. A hand-over the worker does not start is given back by
-- the worker (releaseLeases under the token's score) or by the reclaim.
-- Called after the task's id was LPUSHed on the pending list and made it non-empty (so a busy queue
-- costs nothing here, and FIFO order holds: nothing was pending before it), before its hash is
-- written: a task handed over is written once, as leased (msg, state "active", unique_key when it
-- holds a lock; no pending_since), and its id taken back off the pending list.
-- All keys are derived from the pending key, inside the queue's {q} slot.
-- Defines pushToParked(pendingKey, taskKey, taskId, msg, lockKey, queueName, nowMs)
--   pendingKey    asynq:{q}:pending (must end in "pending"; holds only taskId)
--   taskKey       asynq:{q}:t:<id>, not written yet
--   taskId        the task's id
--   msg           encoded TaskMessage
--   lockKey       the uniqueness lock the task holds, or nil
--   queueName     the queue's name
--   nowMs         the enqueue's now, unix milliseconds (a number)
-- Returns true when a worker took the task (its hash written); false when nothing was written
-- (the caller writes it as pending).
-- How much of a token's lease must be left (ms), and how long a hand-over has to be confirmed (ms).
local handoverMinLeaseLeftMs, handoverConfirmWithinMs = 7000, 5000
local function pushToParked(pendingKey, taskKey, taskId, msg, lockKey, queueName, nowMs)
  local base = string.sub(pendingKey, 1, -8)
  local parkedKey, roomKey = base .. "parked", base .. "parkroom"
  -- A parked key of the wrong type (damaged) hands nothing over: the task is written as pending.
  local parked = redis.pcall("HGETALL", parkedKey)
  if parked.err or #parked == 0 or redis.call("EXISTS", base .. "paused", base .. "flow") > 0 then
    return false
  end
  for i = 1, #parked, 2 do
    local server, token = parked[i], parked[i + 1]
    local score = tonumber(token)
    redis.call("HDEL", parkedKey, server)
    -- A lease score is unix seconds: anything else (not a number, NaN, infinite) is damage, skipped.
    -- Its expiry second (see src/broker/releaseLeases.ts) must be far enough ahead, and the worker alive.
    if score and score > 0 and score < 1e12 and (math.floor(score) + 1) * 1000 - nowMs >= handoverMinLeaseLeftMs
      and redis.call("EXISTS", base .. "alive:" .. server) == 1
      and redis.call("PUBSUB", "NUMSUB", "effect-asynq:parked:" .. server)[2] > 0 then
      -- The hand-over first: a list key of the wrong type (damaged) fails here, before anything is
      -- written, and the next token is tried.
      local listKey = base .. "push:" .. server
      local pushed = redis.pcall("LPUSH", listKey, token .. "\n" .. #queueName .. "\n" .. queueName .. #taskId .. "\n" .. taskId .. msg)
      if type(pushed) == "number" then
        redis.call("EXPIREAT", listKey, math.floor(score) + 61)
        -- Its room, one less: the token stays while some is left (a room key of the wrong type,
        -- damaged, counts as none left).
        local room = redis.pcall("HINCRBY", roomKey, server, -1)
        if type(room) == "number" and room > 0 then
          redis.call("HSET", parkedKey, server, token)
        else
          redis.pcall("HDEL", roomKey, server)
        end
        redis.call("LPOP", pendingKey)
        if lockKey then
          redis.call("HSET", taskKey, "msg", msg, "state", "active", "unique_key", lockKey)
        else
          redis.call("HSET", taskKey, "msg", msg, "state", "active")
        end
        redis.call("LPUSH", base .. "active", taskId)
        redis.call("ZADD", base .. "lease", token, taskId)
        redis.call("ZADD", base .. "handover", nowMs + handoverConfirmWithinMs, token .. "\n" .. #server .. "\n" .. server .. taskId)
        return true
      end
    end
    -- A token skipped: its room goes with it.
    redis.pcall("HDEL", roomKey, server)
  end
  return false
end
