-- The published sorted-set sliding log, the baseline fcap is measured against:
-- ONE call per rule. KEYS[1] the rule's sorted set; ARGV[1] window ms, ARGV[2] limit,
-- ARGV[3] caller time in ms ('' = Redis TIME; the memory fill passes times in the past).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local ttl = window
if ARGV[3] ~= '' then
  -- a past event (memory fill): the set expires when it would have, counted from the event
  ttl = tonumber(ARGV[3]) + window - now
  now = tonumber(ARGV[3])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCOUNT', KEYS[1], now - window + 1, '+inf') < tonumber(ARGV[2]) then
  -- the member must be unique per event: time in ms plus the caller's sequence number (ARGV[4])
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ttl)
  return 1
end
return 0
