-- includes/trimArchive.lua: trims the archive as asynq does after archiving: entries scored at or
-- before the cutoff, then the oldest entries beyond the maximum size, leave the archived zset and
-- lose their task hashes.
-- Defines trimArchive(archivedKey, taskKeyPrefix, cutoff, maxKept, keepId)
--   archivedKey    asynq:{q}:archived
--   taskKeyPrefix  asynq:{q}:t:   (a task's hash is taskKeyPrefix .. id)
--   cutoff         unix seconds (ZRANGEBYSCORE bound, as passed in ARGV)
--   maxKept        maximum number of archived tasks kept (number or numeric string, >= 1)
--   keepId         a task id never trimmed (the task just archived), or nil
-- Returns the number of tasks trimmed.
local function trimArchive(archivedKey, taskKeyPrefix, cutoff, maxKept, keepId)
  local trimmed = 0
  local function drop(ids)
    for _, old in ipairs(ids) do
      if old ~= keepId then
        redis.call("DEL", taskKeyPrefix .. old)
        redis.call("ZREM", archivedKey, old)
        trimmed = trimmed + 1
      end
    end
  end
  drop(redis.call("ZRANGEBYSCORE", archivedKey, "-inf", cutoff))
  local extra = redis.call("ZCARD", archivedKey) - tonumber(maxKept)
  if extra > 0 then
    drop(redis.call("ZRANGE", archivedKey, 0, extra - 1))
  end
  return trimmed
end
