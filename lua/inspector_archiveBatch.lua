-- inspector_archiveBatch: archives up to ARGV[2] tasks of pending (oldest first), of a zset state
-- (scheduled, retry: lowest score first) or of a group (aggregating) (asynq's ArchiveAll*Tasks,
-- in bounded batches). Each task: ZADD archived (score = now), state "archived". Then the archive
-- is trimmed like asynq (entries at or before ARGV[4] and the oldest beyond ARGV[5] are deleted
-- with their hashes). An emptied group leaves the groups set.
-- KEYS[1] source: asynq:{q}:pending (list) | scheduled | retry | asynq:{q}:g:<group> (zsets)
-- KEYS[2] asynq:{q}:archived
-- KEYS[3] asynq:{q}:t:       (task key prefix)
-- KEYS[4] asynq:{q}:groups
-- ARGV[1] "list" or "zset": the type of KEYS[1]
-- ARGV[2] batch size (> 0)
-- ARGV[3] now, unix seconds
-- ARGV[4] trim cutoff, unix seconds
-- ARGV[5] maximum number of archived tasks kept (>= 1)
-- ARGV[6] group name when KEYS[1] is a group, else ""
-- Returns {moved, left in the source, trimmed}.
local n = tonumber(ARGV[2])
local ids
if ARGV[1] == "list" then
  ids = redis.call("RPOP", KEYS[1], n) or {}
else
  ids = redis.call("ZRANGE", KEYS[1], 0, n - 1)
  if #ids > 0 then
    redis.call("ZREM", KEYS[1], unpack(ids))
  end
end
for _, id in ipairs(ids) do
  redis.call("ZADD", KEYS[2], ARGV[3], id)
  redis.call("HSET", KEYS[3] .. id, "state", "archived")
  redis.call("HDEL", KEYS[3] .. id, "pending_since")
end
local trimmed = 0
local function drop(old)
  for _, id in ipairs(old) do
    redis.call("DEL", KEYS[3] .. id)
    redis.call("ZREM", KEYS[2], id)
    trimmed = trimmed + 1
  end
end
drop(redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", ARGV[4]))
local extra = redis.call("ZCARD", KEYS[2]) - tonumber(ARGV[5])
if extra > 0 then
  drop(redis.call("ZRANGE", KEYS[2], 0, extra - 1))
end
local left
if ARGV[1] == "list" then
  left = redis.call("LLEN", KEYS[1])
else
  left = redis.call("ZCARD", KEYS[1])
end
if left == 0 and ARGV[6] ~= "" then
  redis.call("SREM", KEYS[4], ARGV[6])
end
return {#ids, left, trimmed}
