-- forward: scheduled/retry tasks that are due -> pending (LPUSH, state "pending", pending_since =
-- now), or back into their group (hash field "group" set: g:<group> zset scored now in unix
-- seconds, state "aggregating", group listed in the groups set). At most ARGV[3] ids per call.
-- Due means:
--   1. an entry of asynq:{q}:due_ms (exact due times, unix ms, that effect-asynq writes for a due
--      time with a sub-second part) with score <= now (ms), whose task is still in scheduled (then
--      retry) under the whole second its exact time rounds up to; an entry that does not match
--      (the task was moved, deleted or rewritten by something else, e.g. a Go asynq server) is only
--      removed;
--   2. then, as asynq's forward: scheduled first, then retry, score (whole unix seconds) <= now
--      (its due_ms entry, if any, is removed).
-- A due id with no task hash is only removed from its zset.
-- A due retry of a task with a limit key (hash field "limit_key", lua/includes/writeKeyedTask.lua) goes back
-- to waiting for its key instead of pending (not asynq's; includes/keyLimits.lua): state
-- "scheduled" under the sentinel score, its id at the head of the key's list
-- asynq:{q}:lk:<limit key> (it runs next for its key), the key in the ring asynq:{q}:lkeys (keys
-- derived from KEYS[1]: same slot), and the queue's name published on "effect-asynq:wake" and
-- "l:<limit key>" added to asynq:{q}:keyindex when the key joins the ring. The field is read in the one HMGET that reads "group": no command more.
-- KEYS[1] asynq:{q}:scheduled
-- KEYS[2] asynq:{q}:retry
-- KEYS[3] asynq:{q}:pending
-- KEYS[4] asynq:{q}:t:        (task key prefix)
-- KEYS[5] asynq:{q}:g:        (group key prefix; group key = KEYS[5] .. group)
-- KEYS[6] asynq:{q}:groups
-- KEYS[7] asynq:{q}:due_ms    (not asynq's)
-- ARGV[1] now, unix ms (decimal string)
-- ARGV[2] now, unix nanoseconds (string)
-- ARGV[3] maximum number of ids to take (>= 1)
-- Returns: {moved from scheduled, moved from retry, ids dropped (dangling, or due_ms entries that
-- did not match), the earliest due time left (unix ms, decimal string) or false when none is left}
--- @include "includes/delayTask.lua"
local scheduledKey, retryKey, pendingKey, taskKeyPrefix, groupKeyPrefix, groupsKey, dueKey = unpack(KEYS)
local nowMs, nowNanos, left = unpack(ARGV)
left = tonumber(left)
nowMs = tonumber(nowMs)
local nowSeconds = math.floor(nowMs / 1000)
local counts = {0, 0, 0}
local dropped = 3
-- Ids to remove from each zset and to push on pending, sent in chunks at the end (fewer commands
-- per task: a burst due at once moves in few, short calls).
local removals = {[scheduledKey] = {}, [retryKey] = {}, [dueKey] = {}}
local toPending = {}

local function inChunks(command, key, ids)
  for from = 1, #ids, 500 do
    redis.call(command, key, unpack(ids, from, math.min(from + 499, #ids)))
  end
end

local function moveToPending(src, sourceKey, id)
  local taskKey = taskKeyPrefix .. id
  table.insert(removals[sourceKey], id)
  if redis.call("EXISTS", taskKey) == 0 then
    counts[dropped] = counts[dropped] + 1
    return
  end
  local fields = redis.call("HMGET", taskKey, "group", "limit_key")
  local group, limitKey = fields[1], fields[2]
  if limitKey and limitKey ~= "" and sourceKey == retryKey then
    local queuePrefix = string.sub(scheduledKey, 1, -10)
    redis.call("HSET", taskKey, "state", "scheduled")
    redis.call("ZADD", scheduledKey, 253402300799, id)
    redis.call("RPUSH", queuePrefix .. "lk:" .. limitKey, id)
    if redis.call("ZADD", queuePrefix .. "lkeys", "NX", nowMs, limitKey) == 1 then
      redis.call("SADD", queuePrefix .. "keyindex", "l:" .. limitKey)
      redis.call("PUBLISH", "effect-asynq:wake", string.match(scheduledKey, "{(.*)}:scheduled$"))
    end
  elseif group and group ~= "" then
    redis.call("ZADD", groupKeyPrefix .. group, nowSeconds, id)
    redis.call("SADD", groupsKey, group)
    redis.call("HSET", taskKey, "state", "aggregating")
  else
    table.insert(toPending, id)
    redis.call("HSET", taskKey, "state", "pending", "pending_since", nowNanos)
  end
  counts[src] = counts[src] + 1
end

-- 1. exact due times
local exact = redis.call("ZRANGEBYSCORE", dueKey, "-inf", string.format("%.17g", nowMs), "WITHSCORES", "LIMIT", 0, left)
for i = 1, #exact, 2 do
  local id = exact[i]
  local second = math.ceil(tonumber(exact[i + 1]) / 1000)
  table.insert(removals[dueKey], id)
  if tonumber(redis.call("ZSCORE", scheduledKey, id)) == second then
    moveToPending(1, scheduledKey, id)
  elseif tonumber(redis.call("ZSCORE", retryKey, id)) == second then
    moveToPending(2, retryKey, id)
  else
    counts[dropped] = counts[dropped] + 1
  end
  left = left - 1
end
-- Out of the zsets before the whole-second ranges are read (an id is taken once).
inChunks("ZREM", scheduledKey, removals[scheduledKey])
inChunks("ZREM", retryKey, removals[retryKey])
removals[scheduledKey], removals[retryKey] = {}, {}

-- 2. whole seconds (asynq's)
for src, sourceKey in ipairs({scheduledKey, retryKey}) do
  if left <= 0 then
    break
  end
  local ids = redis.call("ZRANGEBYSCORE", sourceKey, "-inf", nowSeconds, "LIMIT", 0, left)
  for _, id in ipairs(ids) do
    table.insert(removals[dueKey], id)
    moveToPending(src, sourceKey, id)
    left = left - 1
  end
  inChunks("ZREM", sourceKey, removals[sourceKey])
end
inChunks("ZREM", dueKey, removals[dueKey])
inChunks("LPUSH", pendingKey, toPending)

local nextDue = earliestDueMs(string.sub(scheduledKey, 1, -10))
return {counts[1], counts[2], counts[3], nextDue and string.format("%.17g", nextDue) or false}
