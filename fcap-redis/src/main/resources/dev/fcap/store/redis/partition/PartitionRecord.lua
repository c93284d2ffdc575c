-- ------------------------------------------------------------------------------------------------
-- the partition value: counter* ; counter := varint(idLen) id kind:u8 expires:i32 varint(len) state
-- (kind: the algorithm, or GAPS for a sliding log in gap form; state_of gives a counter's state as the algorithms read it)

local function parse_value()
  local stored = {}
  if not value then
    return stored
  end
  local p, len = 1, #value
  while p <= len do
    local start = p
    local idlen
    idlen, p = readvarint(value, p)
    local id = sub(value, p, p + idlen - 1)
    p = p + idlen
    local kind = byte(value, p)
    local expires = unpack('>i4', value, p + 1)
    local statelen
    statelen, p = readvarint(value, p + 5)
    -- where it lies in the value (from, to; its state from sfrom): its state is cut out only if read
    -- (state_of), and a counter the step does not change is copied from the value as it is
    local s = { id = id, alg = kind, expiresms = EPOCH_MS + expires * 1000, from = start, sfrom = p,
                to = p + statelen - 1 }
    if kind == LARGE then
      s.alg, s.large = 0, true -- a large sliding log: the state is its descriptor
      s.state = sub(value, p, s.to)
    elseif kind == GAPS then
      s.alg, s.gaps = 0, true -- in gap form: state_of decodes it
    end
    stored[#stored + 1] = s
    p = p + statelen
  end
  return stored
end

-- the state of a stored counter: fcap-core's bytes, or a gap-form log decoded (log_decoded), once, when first read
local function state_of(s)
  if s.state then
    return s.state
  end
  s.state = sub(value, s.sfrom, s.to)
  if s.gaps then
    local times, m = gaps_decode(s.state, s.expiresms)
    local ones = {}
    for i = 1, m do
      ones[i] = 1
    end
    s.state = log_decoded(times, ones, m)
  end
  return s.state
end

local function to_seconds(ms)
  local s = ceildiv(ms - EPOCH_MS, 1000)
  return math.max(-2147483647, math.min(2147483647, s))
end

local function encode_counter(id, alg, expiresms, state)
  local seconds = to_seconds(expiresms)
  if alg == 0 then
    local gaps = gaps_encode(state, seconds)
    if gaps then
      alg, state = GAPS, gaps
    else
      state = log_bytes(state)
    end
  end
  return varint(#id) .. id .. char(alg) .. pack('>i4', seconds) .. varint(#state) .. state
end

local NONE = {}
local function parse_request()
  local counters = {}
  local p = 29
  for i = 1, n do
    local alg, checks, keylen, align, precision
    alg, checks, keylen, align, precision, p = unpack('>BBI2i8I4', req, p)
    local id = sub(req, p, p + keylen - 1)
    p = p + keylen
    -- each table made at its size ({ tunpack(NONE, 1, checks) }: filled one by one, it grows twice for two checks)
    local limits, windows, bounds = { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }
    local enforced, refuses = { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }
    local keepall, maxlimit, maxwindow = false, 0, 0
    for c = 1, checks do
      local limit, window, mode, bound
      limit, window, mode, bound, p = unpack('>i8i8Bi8', req, p)
      -- mode: bit 0 the rule's mode (what the counter keeps), bit 1 relaxed for this message
      -- (countOnly, override): the check never refuses it, and a record keeps the whole window
      limits[c], windows[c], enforced[c], bounds[c], refuses[c] = limit, window, mode % 2 == 1, bound, mode == 1
      keepall = keepall or mode >= 2
      maxlimit = limit > maxlimit and limit or maxlimit
      maxwindow = window > maxwindow and window or maxwindow
    end
    local spec = { checks = checks, precision = precision, limits = limits, bounds = bounds, windows = windows,
                   enforced = enforced, refuses = refuses, keepall = keepall, maxlimit = maxlimit, maxwindow = maxwindow }
    counters[i] = { id = id, alg = alg, align = align, spec = spec }
  end
  if booking then -- Booking: notAfter, whether the decision's time may take it, the open spans
    local notafter, flags, spans
    notafter, flags, spans, p = unpack('>i8BI2', req, p)
    booking = { notafter = notafter, admitsnow = flags % 2 == 1, open = false }
    if flags >= 2 then
      booking.open = {}
      for k = 1, 2 * spans do
        booking.open[k], p = unpack('>i8', req, p)
      end
    end
  end
  return counters
end

local counters = parse_request()
load_algorithms(counters)
local stored = parse_value()

if op == 3 then
  -- READ: the live counters, for inspection. A large log is named, not decoded (O(n): seconds at
  -- 10^6 entries, and Redis serves nobody meanwhile): the caller asks a CHECK of it, O(log n)
  local result = { now }
  for _, s in ipairs(stored) do
    if s.expiresms > now and not OWN_ENTRY[s.alg] and s.alg ~= ENTRY and s.alg ~= SPILLED then
      result[#result + 1] = s.id
      result[#result + 1] = s.large and LARGE or s.alg
      result[#result + 1] = s.large and '' or log_bytes(state_of(s))
    end
  end
  return result
end

-- the live state of each requested counter (same id and algorithm)
local states, found = {}, {}
for i, c in ipairs(counters) do
  for _, s in ipairs(stored) do
    if s.expiresms > now and s.alg == c.alg and s.id == c.id then
      states[i], found[i] = state_of(s), s
    end
  end
end

-- the large logs (LARGE_FROM): a log written in the compact layout before its rule grew moves into
-- blocks; a large log whose rule shrank comes back as a compact state
local larges = {}
for i, c in ipairs(counters) do
  if c.alg == 0 then
    local s = found[i]
    if log_capacity(c.spec) > LARGE_FROM then
      LL = LL or load_large_log()
      local L = LL.open(c.id, s and s.large and s.state or nil)
      if s and not s.large then
        local times, costs, m = log_decode(s.state)
        for k = m, 1, -1 do
          LL.append(L, times[k], costs[k])
        end
      end
      larges[i], states[i] = L, nil
    elseif s and s.large then
      LL = LL or load_large_log()
      states[i] = LL.canonical(LL.open(c.id, s.state))
    end
  end
end
