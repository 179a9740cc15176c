-- inspector_groupStats: every group of a queue with its size. Read-only.
-- KEYS[1] asynq:{q}:groups
-- KEYS[2] asynq:{q}:g:   (group key prefix)
-- ARGV: none
-- Returns a flat array {group1, size1, group2, size2, ...}.
local res = {}
for _, g in ipairs(redis.call("SMEMBERS", KEYS[1])) do
  table.insert(res, g)
  table.insert(res, redis.call("ZCARD", KEYS[2] .. g))
end
return res
