-- fcap partition script: one atomic step over the counters of one partition (one Redis key).
--
-- This is the Lua mirror of dev.fcap.algorithm.PartitionStep and of the four algorithms
-- (SlidingLog, SlidingCounter, FixedWindow, Gcra) in fcap-core: same decisions, same binary states.
-- docs/redis.md documents the key and value layouts byte by byte.
--
-- KEYS[1]  the partition key
-- ARGV[1]  the request, binary (RedisRequests.java writes it), big-endian:
--            op:u8 (0 DECIDE, 1 CHECK, 2 RELEASE, 3 READ) hasTime:u8 time:i64 cost:i64 eventTime:i64
--            n:u16, then n counters: keyLen:u16 key alg:u8 align:i64 precision:u32 checks:u8
--            and per check limit:i64 window:i64 enforced:u8
--
-- Numbers. Lua 5.1 numbers are doubles: integers are exact up to 2^53. Epoch milliseconds (~2^41)
-- and microseconds (~2^51, GCRA) fit; the store refuses caller times outside +-2^53 us. Divisions
-- go through floordiv, which corrects the rounding of a / b so that it is exact for such operands.
--
-- Writes. The script computes everything first and then makes exactly one write (SET or DEL), so
-- an error can never leave a half-recorded partition behind.

local EPOCH_MS = 1577836800000 -- 2020-01-01T00:00Z, the origin of the per-counter expiry seconds
local NEVER = false            -- a check that can never pass (returned as a retry delta of -1)
local WIDE, COSTS = 1, 2       -- sliding-log flags
local TTL_SLACK_MS = 1000      -- added to every key's TTL (see the SET below)

local byte, sub, char, floor = string.byte, string.sub, string.char, math.floor
local pack, unpack = struct.pack, struct.unpack
local band, bor = bit.band, bit.bor

local function floordiv(a, b)
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceildiv(a, b)
  return -floordiv(-a, b)
end

local function readvarint(s, pos)
  local v, scale = 0, 1
  while true do
    local b = byte(s, pos)
    pos = pos + 1
    if b < 128 then
      return v + b * scale, pos
    end
    v = v + (b - 128) * scale
    scale = scale * 128
  end
end

local function varint(v)
  local out = ''
  while v >= 128 do
    out = out .. char(v % 128 + 128)
    v = floor(v / 128)
  end
  return out .. char(v)
end

-- ------------------------------------------------------------------------------------------------
-- sliding-log: flags:u8 newest:i64 entries newest first: age:u32 (i64 if WIDE) [cost:u32 if COSTS]

-- evaluate and record read the same state: decode it once per script call
local log_cache_state, log_cache_times, log_cache_costs, log_cache_n

local function log_decode_uncached(state)
  local times, costs = {}, {}
  if not state then
    return times, costs, 0
  end
  local flags = byte(state, 1)
  local newest = unpack('>i8', state, 2)
  local wide, hascost = band(flags, WIDE) ~= 0, band(flags, COSTS) ~= 0
  local size = (wide and 8 or 4) + (hascost and 4 or 0)
  local n = (#state - 9) / size
  local at = 10
  for i = 1, n do
    if wide then
      times[i] = newest - unpack('>i8', state, at)
    else
      times[i] = newest - unpack('>I4', state, at)
    end
    costs[i] = hascost and unpack('>I4', state, at + size - 4) or 1
    at = at + size
  end
  return times, costs, n
end

-- the decoded entries of a state; callers that modify them (record, release) pass mutable and get
-- their own copy, so the cached view stays intact
local function log_decode(state, mutable)
  if not state then
    return {}, {}, 0
  end
  if state ~= log_cache_state then
    log_cache_times, log_cache_costs, log_cache_n = log_decode_uncached(state)
    log_cache_state = state
  end
  if not mutable then
    return log_cache_times, log_cache_costs, log_cache_n
  end
  local times, costs = {}, {}
  for i = 1, log_cache_n do
    times[i], costs[i] = log_cache_times[i], log_cache_costs[i]
  end
  return times, costs, log_cache_n
end

local function log_encode(times, costs, n)
  if n == 0 then
    return nil
  end
  local newest, flags = times[1], 0
  for i = 1, n do
    if newest - times[i] > 4294967295 then
      flags = bor(flags, WIDE)
    end
    if costs[i] ~= 1 then
      flags = bor(flags, COSTS)
    end
  end
  local wide, hascost = band(flags, WIDE) ~= 0, band(flags, COSTS) ~= 0
  local out = { pack('>Bi8', flags, newest) }
  for i = 1, n do
    local age = newest - times[i]
    local e = wide and pack('>i8', age) or pack('>I4', age)
    if hascost then
      e = e .. pack('>I4', costs[i])
    end
    out[i + 1] = e
  end
  return table.concat(out)
end

-- SlidingLog.capacity: enforced checks never hold more than their limit; a log with shadow checks
-- keeps a margin so that their counts stay exact after releases
local function log_capacity(spec)
  for c = 1, spec.checks do
    if not spec.enforced[c] then
      return math.max(2 * spec.maxlimit, spec.maxlimit + 64)
    end
  end
  return spec.maxlimit
end

local function log_prune(times, costs, n, spec, now)
  local horizon = now - spec.maxwindow
  local capacity = log_capacity(spec)
  local newer, keep = 0, 0
  while keep < n and times[keep + 1] > horizon and newer < capacity do
    newer = newer + costs[keep + 1]
    keep = keep + 1
  end
  return keep
end

local function log_evaluate(state, spec, align, now, cost, used, retry, at)
  local times, costs, n = log_decode(state)
  local admitted = true
  for c = 1, spec.checks do
    local limit, window = spec.limits[c], spec.windows[c]
    local sum, inwindow = 0, 0
    while inwindow < n and times[inwindow + 1] > now - window do
      inwindow = inwindow + 1
      sum = sum + costs[inwindow]
    end
    used[at + c] = sum
    local r
    if sum + cost <= limit then
      r = now
    elseif cost > limit then
      r = NEVER
    else
      -- let the oldest entries of the window age out until the message fits
      r = NEVER
      local remaining = sum
      for i = inwindow, 1, -1 do
        remaining = remaining - costs[i]
        if remaining + cost <= limit then
          r = times[i] + window
          break
        end
      end
    end
    retry[at + c] = r
    if r ~= now and spec.enforced[c] then
      admitted = false
    end
  end
  return admitted
end

local function log_record(state, spec, align, now, cost)
  local times, costs, n = log_decode(state, true)
  local pos = 1
  while pos <= n and times[pos] > now do
    pos = pos + 1 -- the clock went back: keep the log ordered newest first
  end
  table.insert(times, pos, now)
  table.insert(costs, pos, cost)
  n = n + 1
  return log_encode(times, costs, log_prune(times, costs, n, spec, now))
end

local function log_release(state, spec, align, now, eventtime, cost)
  local times, costs, n = log_decode(state, true)
  for i = 1, n do
    if times[i] == eventtime and costs[i] == cost then
      table.remove(times, i)
      table.remove(costs, i)
      return log_encode(times, costs, log_prune(times, costs, n - 1, spec, now))
    end
  end
  return state
end

local function log_expires(state, spec, align)
  if not state or #state <= 9 then
    return nil
  end
  return unpack('>i8', state, 2) + spec.maxwindow
end

-- ------------------------------------------------------------------------------------------------
-- sliding-counter: width:i64 newest:i64 entries newest first: age:u16 count:u32

local function sc_width(spec)
  return math.max(1, ceildiv(spec.windows[1], spec.precision))
end

local function sc_decode(state, width)
  local idx, cnt = {}, {}
  if not state or #state <= 16 then
    return idx, cnt, 0
  end
  local n = (#state - 16) / 6
  local oldwidth = unpack('>i8', state, 1)
  local newest = unpack('>i8', state, 9)
  if oldwidth ~= width then
    -- written with another width (the rule was edited): fold conservatively into one sub-window
    local total = 0
    for i = 1, n do
      total = total + unpack('>I4', state, 17 + (i - 1) * 6 + 2)
    end
    idx[1] = floordiv((newest + 1) * oldwidth - 1, width)
    cnt[1] = total
    return idx, cnt, 1
  end
  for i = 1, n do
    local at = 17 + (i - 1) * 6
    idx[i] = newest - unpack('>I2', state, at)
    cnt[i] = unpack('>I4', state, at + 2)
  end
  return idx, cnt, n
end

local function sc_encode(idx, cnt, n, width)
  if n == 0 then
    return nil
  end
  local out = { pack('>i8i8', width, idx[1]) }
  for i = 1, n do
    out[i + 1] = pack('>I2I4', idx[1] - idx[i], cnt[i])
  end
  return table.concat(out)
end

local function sc_oldest(now, window, width)
  return floordiv(now - window + 1, width)
end

local function sc_prune(idx, n, spec, now, width)
  local oldest = sc_oldest(now, spec.windows[1], width)
  local keep = 0
  while keep < n and idx[keep + 1] >= oldest and idx[1] - idx[keep + 1] <= 65535 do
    keep = keep + 1
  end
  return keep
end

local function sc_evaluate(state, spec, align, now, cost, used, retry, at)
  local width = sc_width(spec)
  local window, limit = spec.windows[1], spec.limits[1]
  local idx, cnt, n = sc_decode(state, width)
  local oldest = sc_oldest(now, window, width)
  local counted, sum = 0, 0
  while counted < n and idx[counted + 1] >= oldest do
    counted = counted + 1
    sum = sum + cnt[counted]
  end
  used[at + 1] = sum
  local r
  if sum + cost <= limit then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = NEVER
    local remaining = sum
    for i = counted, 1, -1 do
      remaining = remaining - cnt[i]
      if remaining + cost <= limit then
        r = (idx[i] + 1) * width + window - 1
        break
      end
    end
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function sc_record(state, spec, align, now, cost)
  local width = sc_width(spec)
  local idx, cnt, n = sc_decode(state, width)
  local current = floordiv(now, width)
  local pos = 1
  while pos <= n and idx[pos] > current do
    pos = pos + 1
  end
  if pos <= n and idx[pos] == current then
    cnt[pos] = cnt[pos] + cost
  else
    table.insert(idx, pos, current)
    table.insert(cnt, pos, cost)
    n = n + 1
  end
  return sc_encode(idx, cnt, sc_prune(idx, n, spec, now, width), width)
end

local function sc_release(state, spec, align, now, eventtime, cost)
  local width = sc_width(spec)
  local idx, cnt, n = sc_decode(state, width)
  local bucket = floordiv(eventtime, width)
  for i = 1, n do
    if idx[i] == bucket then
      cnt[i] = math.max(0, cnt[i] - cost)
      if cnt[i] == 0 then
        table.remove(idx, i)
        table.remove(cnt, i)
        n = n - 1
      end
      return sc_encode(idx, cnt, sc_prune(idx, n, spec, now, width), width)
    end
  end
  return state
end

local function sc_expires(state, spec, align)
  if not state then
    return nil
  end
  local width = unpack('>i8', state, 1)
  local newest = unpack('>i8', state, 9)
  return (newest + 1) * width + math.max(spec.windows[1], width) - 1
end

-- ------------------------------------------------------------------------------------------------
-- fixed-window: last:i64 count:u32

local function fw_start(t, window, align)
  return floordiv(t - align, window) * window + align
end

local function fw_evaluate(state, spec, align, now, cost, used, retry, at)
  local window, limit = spec.windows[1], spec.limits[1]
  local start = fw_start(now, window, align)
  local count, last = 0, nil
  if state then
    local l = unpack('>i8', state, 1)
    if l >= start then
      last = l
      count = unpack('>I4', state, 9)
    end
  end
  used[at + 1] = count
  local r
  if count + cost <= limit then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = fw_start(last, window, align) + window
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function fw_record(state, spec, align, now, cost)
  local start = fw_start(now, spec.windows[1], align)
  if state then
    local l = unpack('>i8', state, 1)
    if l >= start then
      return pack('>i8I4', math.max(now, l), unpack('>I4', state, 9) + cost)
    end
  end
  return pack('>i8I4', now, cost)
end

local function fw_release(state, spec, align, now, eventtime, cost)
  local start = fw_start(now, spec.windows[1], align)
  if not state or unpack('>i8', state, 1) < start or eventtime < start then
    return state
  end
  local count = unpack('>I4', state, 9) - cost
  if count <= 0 then
    return nil
  end
  return sub(state, 1, 8) .. pack('>I4', count)
end

local function fw_expires(state, spec, align)
  if not state then
    return nil
  end
  local window = spec.windows[1]
  return fw_start(unpack('>i8', state, 1), window, align) + window
end

-- ------------------------------------------------------------------------------------------------
-- gcra: tat:i64 interval:i64, both in microseconds; a state written at another interval (the rule
-- was edited) is rescaled to the same number of messages in flight, rounded up, plus 1 us

local function gcra_interval(spec)
  return ceildiv(spec.windows[1] * 1000, spec.limits[1])
end

local function gcra_tat(state, t, nowus)
  if not state then
    return nowus
  end
  local tat, old = unpack('>i8i8', state, 1)
  if tat <= nowus then
    return nowus
  end
  if old == t then
    return tat
  end
  local ahead = tat - nowus
  local whole = floordiv(ahead, old)
  local rest = ahead - whole * old
  -- Gcra.java computes this term in doubles too: (long) Math.ceil(rest * (double) t / old)
  return nowus + whole * t + math.ceil(rest * t / old) + 1
end

local function gcra_evaluate(state, spec, align, now, cost, used, retry, at)
  local t = gcra_interval(spec)
  local limit = spec.limits[1]
  local nowus = now * 1000
  local tat = gcra_tat(state, t, nowus)
  used[at + 1] = math.min(limit, ceildiv(tat - nowus, t))
  local r
  if tat - nowus + cost * t <= limit * t then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = ceildiv(tat - (limit - cost) * t, 1000)
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function gcra_record(state, spec, align, now, cost)
  local t = gcra_interval(spec)
  return pack('>i8i8', gcra_tat(state, t, now * 1000) + cost * t, t)
end

local function gcra_release(state, spec, align, now, eventtime, cost)
  if not state then
    return nil
  end
  local t = gcra_interval(spec)
  local nowus = now * 1000
  local tat = gcra_tat(state, t, nowus) - cost * t
  if tat <= nowus then
    return nil
  end
  return pack('>i8i8', tat, t)
end

local function gcra_expires(state, spec, align)
  if not state then
    return nil
  end
  return ceildiv(unpack('>i8', state, 1), 1000)
end

-- algorithm codes are the ordinals of dev.fcap.model.Algorithm
local ALGORITHMS = {
  [0] = { evaluate = log_evaluate, record = log_record, release = log_release, expires = log_expires },
  [1] = { evaluate = sc_evaluate, record = sc_record, release = sc_release, expires = sc_expires },
  [2] = { evaluate = fw_evaluate, record = fw_record, release = fw_release, expires = fw_expires },
  [3] = { evaluate = gcra_evaluate, record = gcra_record, release = gcra_release, expires = gcra_expires },
}

-- ------------------------------------------------------------------------------------------------
-- the partition value: counter* ; counter := varint(idLen) id alg:u8 expires:i32 varint(len) state

local function parse_value(value)
  local stored = {}
  if not value then
    return stored
  end
  local pos, len = 1, #value
  while pos <= len do
    local start = pos
    local idlen
    idlen, pos = readvarint(value, pos)
    local id = sub(value, pos, pos + idlen - 1)
    pos = pos + idlen
    local alg = byte(value, pos)
    local expires = unpack('>i4', value, pos + 1)
    local statelen
    statelen, pos = readvarint(value, pos + 5)
    stored[#stored + 1] = {
      id = id, alg = alg, expiresms = EPOCH_MS + expires * 1000,
      state = sub(value, pos, pos + statelen - 1), raw = sub(value, start, pos + statelen - 1),
    }
    pos = pos + statelen
  end
  return stored
end

local function to_seconds(ms)
  local s = ceildiv(ms - EPOCH_MS, 1000)
  return math.max(-2147483647, math.min(2147483647, s))
end

local function encode_counter(id, alg, expiresms, state)
  return varint(#id) .. id .. char(alg) .. pack('>i4', to_seconds(expiresms)) .. varint(#state) .. state
end

local function parse_request(req)
  local op, hastime, time, cost, eventtime, n, pos = unpack('>BBi8i8i8I2', req)
  local counters = {}
  for i = 1, n do
    local keylen
    keylen, pos = unpack('>I2', req, pos)
    local id = sub(req, pos, pos + keylen - 1)
    local alg, align, precision, checks
    alg, align, precision, checks, pos = unpack('>Bi8I4B', req, pos + keylen)
    local spec = { checks = checks, precision = precision, limits = {}, windows = {}, enforced = {},
                   maxlimit = 0, maxwindow = 0 }
    for c = 1, checks do
      local limit, window, enforced
      limit, window, enforced, pos = unpack('>i8i8B', req, pos)
      spec.limits[c], spec.windows[c], spec.enforced[c] = limit, window, enforced ~= 0
      spec.maxlimit = math.max(spec.maxlimit, limit)
      spec.maxwindow = math.max(spec.maxwindow, window)
    end
    counters[i] = { id = id, alg = alg, align = align, spec = spec }
  end
  return op, hastime ~= 0, time, cost, eventtime, counters
end

local op, hastime, now, cost, eventtime, counters = parse_request(ARGV[1])
if not hastime then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end

local key = KEYS[1]
local stored = parse_value(redis.call('GET', key))

if op == 3 then
  -- READ: the live counters, for inspection
  local out = { now }
  for _, s in ipairs(stored) do
    if s.expiresms > now then
      out[#out + 1] = s.id
      out[#out + 1] = s.alg
      out[#out + 1] = s.state
    end
  end
  return out
end

-- the live state of each requested counter (same id and algorithm)
local states = {}
for i, c in ipairs(counters) do
  for _, s in ipairs(stored) do
    if s.expiresms > now and s.alg == c.alg and s.id == c.id then
      states[i] = s.state
    end
  end
end

-- PartitionStep: evaluate every counter (or release), then record everywhere only if all admit
local used, retry = {}, {}
local allowed = true
local at = 0
for i, c in ipairs(counters) do
  local a = ALGORITHMS[c.alg]
  if op == 2 then
    states[i] = a.release(states[i], c.spec, c.align, now, eventtime, cost)
  else
    allowed = a.evaluate(states[i], c.spec, c.align, now, cost, used, retry, at) and allowed
  end
  at = at + c.spec.checks
end
if allowed and op == 0 then
  for i, c in ipairs(counters) do
    states[i] = ALGORITHMS[c.alg].record(states[i], c.spec, c.align, now, cost)
  end
end

if op ~= 1 then
  -- the next value: the requested counters with their new states, then the other live counters
  local parts, maxexpires = {}, nil
  for i, c in ipairs(counters) do
    local expires = states[i] and ALGORITHMS[c.alg].expires(states[i], c.spec, c.align)
    local first = true
    for j = 1, i - 1 do
      if counters[j].id == c.id and counters[j].alg == c.alg then
        first = false
      end
    end
    -- the expiry is kept in i32 seconds since 2020, clamped (as in MemoryStore): a counter whose
    -- clamped expiry has passed (times after 2088) could never be read back, so it is not written
    local e = expires and EPOCH_MS + to_seconds(expires) * 1000
    if expires and expires > now and e > now and first then
      parts[#parts + 1] = encode_counter(c.id, c.alg, expires, states[i])
      maxexpires = math.max(maxexpires or e, e)
    end
  end
  for _, s in ipairs(stored) do
    if s.expiresms > now then
      local requested = false
      for _, c in ipairs(counters) do
        if c.alg == s.alg and c.id == s.id then
          requested = true
        end
      end
      if not requested then
        parts[#parts + 1] = s.raw
        maxexpires = math.max(maxexpires or s.expiresms, s.expiresms)
      end
    end
  end
  if #parts == 0 then
    if #stored > 0 then
      redis.call('DEL', key)
    end
  else
    -- The TTL is counted in real time but the expiry in the decision's clock (Redis TIME, or a
    -- caller or injected clock that may lag real time): a second of slack keeps a key alive until
    -- its counters have expired in the decision clock; liveness itself is decided by 'expires'.
    redis.call('SET', key, table.concat(parts), 'PX', maxexpires - now + TTL_SLACK_MS)
  end
end

-- reply: now, allowed, then per check the used cost and the retry delay (-1: never); a release
-- has no per-check results (PartitionStep reports zeros)
local out = { now, allowed and 1 or 0 }
if op == 2 then
  return out
end
for i = 1, at do
  out[2 + i] = used[i]
  out[2 + at + i] = retry[i] == NEVER and -1 or retry[i] - now
end
return out
