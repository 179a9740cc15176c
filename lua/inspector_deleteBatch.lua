-- inspector_deleteBatch: deletes up to ARGV[2] tasks of pending (oldest first), of a zset state
-- (scheduled, retry, archived, completed: lowest score first) or of a group (aggregating)
-- (asynq's DeleteAll*Tasks, in bounded batches): the id leaves the list/zset, the hash is deleted
-- and a uniqueness lock the task still holds is released. An emptied group leaves the groups set.
-- KEYS[1] source: asynq:{q}:pending (list) | scheduled | retry | archived | completed |
--         asynq:{q}:g:<group> (zsets)
-- KEYS[2] asynq:{q}:t:       (task key prefix)
-- KEYS[3] asynq:{q}:groups
-- KEYS[4] asynq:{q}:unique:  (only lock keys under this prefix are touched)
-- ARGV[1] "list" or "zset": the type of KEYS[1]
-- ARGV[2] batch size (> 0)
-- ARGV[3] group name when KEYS[1] is a group, else ""
-- Returns {deleted, left in the source}.
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
  local key = KEYS[2] .. id
  local ukey = redis.call("HGET", key, "unique_key")
  if ukey and string.sub(ukey, 1, #KEYS[4]) == KEYS[4] and redis.call("GET", ukey) == id then
    redis.call("DEL", ukey)
  end
  redis.call("DEL", key)
end
local left
if ARGV[1] == "list" then
  left = redis.call("LLEN", KEYS[1])
else
  left = redis.call("ZCARD", KEYS[1])
end
if left == 0 and ARGV[3] ~= "" then
  redis.call("SREM", KEYS[3], ARGV[3])
end
return {#ids, left}
