-- includes/flowLimit.lua: a queue's flow-control limit (not asynq's), applied where tasks are
-- leased (includes/leaseTasks.lua). The limit is the hash asynq:{q}:flow (absent for an unlimited
-- queue, which costs nothing here: the lease looks for it in the EXISTS it already sends for the
-- paused key), with the fields:
--   interval_ms  a rate: the time between two tasks in ms (per_ms / limit), a GCRA (generic cell
--                rate algorithm: a token bucket kept as one timestamp, no refill process)
--   burst        how many tasks the rate lets start at once after a quiet spell (>= 1)
--   tat          the rate's state: its theoretical arrival time, unix ms (GCRA's TAT)
--   concurrency  a cap: at most this many tasks of the queue active at once (LLEN active, which
--                counts every worker's tasks, Go asynq servers' included)
--   limit, per_ms  the rate as it was given (for display only)
--   hold_until   a hold (lua/holdQueue.lua: a handler's RateLimited with holdQueue): no task is
--                leased before this time, unix ms; the lease that finds it past removes it (the
--                hash goes with it when the hold was all it held)
-- Time is the caller's (its Clock, in ARGV), so the rules are testable with TestClock.
-- Defines flowAllowance(flowKey, activeKey, nowMs, want)
--   flowKey    asynq:{q}:flow (exists)
--   activeKey  asynq:{q}:active
--   nowMs      now, unix ms (a number)
--   want       most tasks the caller would take (a number >= 1)
-- Returns a table: allowed (0..want: how many may be leased now), and what is needed to charge
-- the lease afterwards (flowCharge).
-- Defines flowCharge(flowKey, limit, leased)
--   limit      what flowAllowance returned
--   leased     how many tasks were leased under it
-- Moves the rate's TAT on by `leased` tasks. Returns nil when the limit did not cut the lease
-- (all that was wanted was taken, or the queue ran out of pending tasks first); else how long
-- until the next task is allowed: ms (>= 0) until the rate lets one through, or -1 when the
-- concurrency cap cut it (a task of the queue has to end first).
local function flowAllowance(flowKey, activeKey, nowMs, want)
  local f = redis.call("HMGET", flowKey, "interval_ms", "burst", "concurrency", "tat", "hold_until")
  local hold = tonumber(f[5])
  if hold then
    if hold > nowMs then
      -- Nothing now; the next task is allowed at the hold's end (charged as a rate wait: tat = hold).
      return { allowed = 0, nowMs = nowMs, by = "rate", tat = hold, burst = 1, interval = 0 }
    end
    redis.call("HDEL", flowKey, "hold_until")
  end
  local limit = { allowed = want, nowMs = nowMs }
  local interval = tonumber(f[1])
  if interval and interval > 0 then
    local burst = math.max(math.floor(tonumber(f[2]) or 1), 1)
    -- A TAT can be no later than now + burst * interval (no lease takes it further); one that is
    -- (the rate was just made faster, or a worker's clock runs ahead) is brought back to that.
    local tat = math.min(math.max(tonumber(f[4]) or nowMs, nowMs), nowMs + burst * interval)
    -- k tasks may start now while tat + k * interval - now <= burst * interval.
    local room = math.floor((burst * interval - (tat - nowMs)) / interval + 1e-9)
    limit.interval, limit.burst, limit.tat = interval, burst, tat
    if room < limit.allowed then
      limit.allowed, limit.by = math.max(room, 0), "rate"
    end
  end
  local cap = tonumber(f[3])
  if cap then
    local left = cap - redis.call("LLEN", activeKey)
    if left < limit.allowed then
      limit.allowed, limit.by = math.max(left, 0), "cap"
    end
  end
  return limit
end
local function flowCharge(flowKey, limit, leased)
  if limit.interval and leased > 0 then
    limit.tat = limit.tat + leased * limit.interval
    redis.call("HSET", flowKey, "tat", string.format("%.3f", limit.tat))
  end
  if not limit.by or leased < limit.allowed then
    return nil
  end
  if limit.by == "cap" then
    return -1
  end
  return math.max(0, math.ceil(limit.tat - (limit.burst - 1) * limit.interval - limit.nowMs))
end
