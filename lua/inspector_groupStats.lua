-- inspector_groupStats: every group of a queue with its size. Read-only.
-- KEYS[1] asynq:{q}:groups
-- KEYS[2] asynq:{q}:g:   (group key prefix)
-- ARGV: none
-- Returns a flat array {group1, size1, group2, size2, ...}.
local groupsKey, groupKeyPrefix = unpack(KEYS)
local res = {}
for _, g in ipairs(redis.call("SMEMBERS", groupsKey)) do
  table.insert(res, g)
  table.insert(res, redis.call("ZCARD", groupKeyPrefix .. g))
end
return res
