-- includes/keyLimits.lua: per-key limits and fair tenants (not asynq's), applied where tasks are
-- leased (includes/leaseTasks.lua). A task enqueued with a limit key waits, until its key has
-- room, as an ordinary asynq scheduled task (state "scheduled", its id in asynq:{q}:scheduled under
-- the sentinel score keySentinel, which no forwarder reaches: ours and Go's forward score <= now),
-- and its id is also in the key's list. Keys of one queue (all in the queue's {q} slot):
--   asynq:{q}:lkeys        zset: the keys with waiting tasks, scored (unix ms) by when the key is
--                          next worth a look (its rate's next allowance, a recheck of its
--                          concurrency, or the time it was last served: the ring's order)
--   asynq:{q}:lk:<key>     list: the key's waiting ids (LPUSH at enqueue, RPOP here: FIFO)
--   asynq:{q}:lka:<key>    set: the key's leased ids (only with a per-key concurrency); a member
--                          whose task hash is no longer "active" is dropped when counted (a crash,
--                          a retry, a Go server or an operator ended it: no slot leaks)
--   asynq:{q}:lkt:<key>    string: the key's GCRA TAT (with a per-key rate), expiring once spent
--   asynq:{q}:keyindex     set: "l:<key>" for each key that may have any of the three above
--                          (added when the key joins the ring, removed when it leaves the ring or
--                          ends a task with none of them left), so that deleting the queue finds
--                          them (lua/inspector_deleteQueue.lua); keep-last keys are in it too
-- The per-key parts of the limit are fields of asynq:{q}:flow (the same for every key):
--   key_interval_ms, key_burst  a per-key rate (GCRA, as includes/flowLimit.lua's)
--   key_concurrency             at most this many tasks of one key active at once
-- Fairness: the lease takes the ready keys with the lowest scores (at most as many as it wants
-- tasks: never a scan of all keys) and serves them round robin, one task per key per round, the
-- queue's pending list (tasks without a key) taking its turn as one more tenant; a key served goes
-- to the back of the ring (scored just after now).
-- Defines keySentinel: the scheduled score of a waiting keyed task (9999-12-31T23:59:59Z, seconds).
-- Defines leaseFromKeys(queuePrefix, flowKey, pendingKey, want, nowMs)
--   queuePrefix  asynq:{q}:
--   flowKey      asynq:{q}:flow (may be absent: no per-key limit, only the fair ring)
--   pendingKey   asynq:{q}:pending (its tasks take one turn per round)
--   want         most tasks to take (>= 1)
--   nowMs        now, unix ms (a number)
-- Returns ids, wait. Takes the ids out of their waiting places (RPOP of the key's list and ZREM of the scheduled
-- zset; RPOP of pending), charges the keys' limits, puts the keys back in the ring, and returns
-- ids (the ids, in the order taken) and wait (nil, or when fewer than `want` were taken and some
-- key still has waiting tasks: ms >= 0 until the earliest key is worth a look).
local keySentinel = 253402300799
-- A key held back by its concurrency is looked at again after this long even if none of its tasks
-- is seen to end (the worker that ran one re-scores the key at once: lua/releaseLimitKey.lua).
local keyRecheckMs = 2000
-- Most stale ids (deleted, run by an operator, archived) one key's turn skips in one call.
local keyStaleSkips = 100
local function leaseFromKeys(queuePrefix, flowKey, pendingKey, want, nowMs)
  local ringKey = queuePrefix .. "lkeys"
  local scheduledKey = queuePrefix .. "scheduled"
  local taskKeyPrefix = queuePrefix .. "t:"
  local f = redis.call("HMGET", flowKey, "key_interval_ms", "key_burst", "key_concurrency")
  local interval = tonumber(f[1])
  if interval and interval <= 0 then
    interval = nil
  end
  local burst = math.max(math.floor(tonumber(f[2]) or 1), 1)
  local cap = tonumber(f[3])
  -- Ready: scored up to now, and the keys served earlier in this same millisecond (scored now + 0.5,
  -- behind every key that waited).
  local names = redis.call("ZRANGEBYSCORE", ringKey, "-inf", string.format("%.3f", nowMs + 0.5), "LIMIT", 0, want)
  local keys = {}
  for i, name in ipairs(names) do
    keys[i] = { name = name, taken = {}, room = nil, empty = false, stale = false }
  end
  -- A key's room now: its concurrency (live leased ids) and its rate (GCRA), read at its first turn.
  local function roomOf(k)
    local room = want
    if cap then
      local setKey = queuePrefix .. "lka:" .. k.name
      local live = 0
      for _, id in ipairs(redis.call("SMEMBERS", setKey)) do
        if redis.call("HGET", taskKeyPrefix .. id, "state") == "active" then
          live = live + 1
        else
          redis.call("SREM", setKey, id)
        end
      end
      k.capRoom = cap - live
      room = math.min(room, k.capRoom)
    end
    if interval then
      local tat = tonumber(redis.call("GET", queuePrefix .. "lkt:" .. k.name)) or nowMs
      tat = math.min(math.max(tat, nowMs), nowMs + burst * interval)
      k.tat = tat
      room = math.min(room, math.floor((burst * interval - (tat - nowMs)) / interval + 1e-9))
    end
    return math.max(room, 0)
  end
  -- The key's next waiting id (skipping stale ones), or nil.
  local function popWaiting(k)
    local listKey = queuePrefix .. "lk:" .. k.name
    for _ = 1, keyStaleSkips do
      local id = redis.call("RPOP", listKey)
      if not id then
        k.empty = true
        return nil
      end
      if tonumber(redis.call("ZSCORE", scheduledKey, id)) == keySentinel then
        redis.call("ZREM", scheduledKey, id)
        return id
      end
    end
    k.stale = true
    return nil
  end
  local ids = {}
  local pendingLeft = true
  while #ids < want do
    local progress = false
    for _, k in ipairs(keys) do
      if #ids >= want then
        break
      end
      if not k.empty and not k.stale then
        if k.room == nil then
          k.room = roomOf(k)
        end
        if k.room > 0 then
          local id = popWaiting(k)
          if id then
            k.room = k.room - 1
            table.insert(k.taken, id)
            table.insert(ids, id)
            progress = true
          end
        end
      end
    end
    if pendingLeft and #ids < want then
      local id = redis.call("RPOP", pendingKey)
      if id then
        table.insert(ids, id)
        progress = true
      else
        pendingLeft = false
      end
    end
    if not progress then
      break
    end
  end
  for _, k in ipairs(keys) do
    local n = #k.taken
    if n > 0 and cap then
      redis.call("SADD", queuePrefix .. "lka:" .. k.name, unpack(k.taken))
    end
    local next = nowMs + 0.5
    if interval and k.tat then
      if n > 0 then
        k.tat = k.tat + n * interval
        redis.call("SET", queuePrefix .. "lkt:" .. k.name, string.format("%.3f", k.tat), "PX", math.max(1, math.ceil(k.tat - nowMs)))
      end
      next = math.max(next, k.tat - (burst - 1) * interval)
    end
    if k.capRoom and k.capRoom - n <= 0 then
      next = math.max(next, nowMs + keyRecheckMs)
    end
    if k.empty or (n > 0 and redis.call("EXISTS", queuePrefix .. "lk:" .. k.name) == 0) then
      redis.call("ZREM", ringKey, k.name)
      if redis.call("EXISTS", queuePrefix .. "lka:" .. k.name, queuePrefix .. "lkt:" .. k.name) == 0 then
        redis.call("SREM", queuePrefix .. "keyindex", "l:" .. k.name)
      end
    elseif k.room ~= nil or k.stale then
      redis.call("ZADD", ringKey, string.format("%.3f", next), k.name)
    end
  end
  local wait
  if #ids < want then
    local head = redis.call("ZRANGE", ringKey, 0, 0, "WITHSCORES")
    if head[2] then
      wait = math.max(0, math.ceil(tonumber(head[2]) - nowMs))
    end
  end
  return ids, wait
end
