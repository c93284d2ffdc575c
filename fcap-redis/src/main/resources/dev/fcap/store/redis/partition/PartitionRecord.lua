-- ------------------------------------------------------------------------------------------------
-- the partition value: counter* ; counter := varint(idLen) id kind:u8 expires:i32 varint(len) state
-- (kind: the algorithm, or GAPS for a sliding log in gap form; state_of gives a counter's state as the algorithms read it)

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

-- The request's counters, then a deferral's booking. Here, and the value below, in blocks of the
-- chunk rather than functions called once: a function literal costs Redis, on every call, a walk of
-- the chunk's open upvalues for each local it captures, and these would capture many.
local counters = {}
do
  local NONE, p = {}, 29
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
                   enforced = enforced, refuses = refuses, keepall = keepall, maxlimit = maxlimit, maxwindow = maxwindow,
                   periods = false }
    if alg == PERIODS then -- the ends of a calendar's periods, in ms after align
      local count = byte(req, p)
      local ends = { tunpack(NONE, 1, count) }
      p = p + 1
      for e = 1, count do
        ends[e], p = unpack('>i8', req, p)
      end
      alg, spec.periods = FIXED, ends
    end
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
end
load_algorithms(counters)

-- The value in one pass, after the request: the live entry of each requested counter (same id and
-- algorithm) as a table, found[i]; and the other live counters, which the step leaves as they are,
-- as runs of adjacent bytes to copy (kept: from, to, ...), with their latest expiry (keptexp), the
-- remembered ids among them (keptids) and the expiry of a SPILLED marker (keptmarker: the message id's
-- entry_tail writes it again). No table for those: a table each cost about half a microsecond, and
-- a partition holds a counter per content it has seen. READ (all) gets a table for every live
-- counter (stored).
local stored, found, kept, keptexp, keptids, keptmarker = {}, {}, {}, false, 0, false
do
  local all = op == 3
  local p, len, runto, nc = 1, value and #value or 0, false, #counters
  while p <= len do
    local start = p
    local idlen, statelen
    idlen, p = readvarint(value, p)
    local id = sub(value, p, p + idlen - 1)
    p = p + idlen
    local kind = byte(value, p)
    local expms = EPOCH_MS + unpack('>i4', value, p + 1) * 1000
    statelen, p = readvarint(value, p + 5)
    local to = p + statelen - 1
    local alg = (kind == LARGE or kind == GAPS) and 0 or kind
    local requested = false
    for i = 1, nc do
      local c = counters[i]
      if c.alg == alg and c.id == id then
        requested = true
        if expms > now then
          found[i] = true
        end
      end
    end
    if expms > now and (requested or all) then
      -- where its state lies (sfrom, to): cut out only if read (state_of); a large log's is its
      -- descriptor, a gap-form log's is decoded when read
      local s = { id = id, alg = alg, expiresms = expms, sfrom = p, to = to, large = kind == LARGE,
                  gaps = kind == GAPS, state = kind == LARGE and sub(value, p, to) or nil }
      for i = 1, nc do
        if found[i] == true then
          found[i] = s
        end
      end
      if all then
        stored[#stored + 1] = s
      end
    elseif expms > now then
      if alg == SPILLED and mid then
        keptmarker = math.max(keptmarker or expms, expms)
      elseif not OWN_ENTRY[alg] and not (released_inline and alg == ENTRY and id == mid) then -- released: it goes
        if runto and start == runto + 1 then
          kept[#kept] = to
        else
          kept[#kept + 1], kept[#kept + 2] = start, to
        end
        runto = to
        keptexp = (keptexp or 0) > expms and keptexp or expms
        keptids = keptids + (alg == ENTRY and 1 or 0)
      end
    end
    p = to + 1
  end
end

if op == 3 then
  -- READ: the live counters, for inspection. A large log is named, not decoded (O(n): seconds at
  -- 10^6 entries, and Redis serves nobody meanwhile): the caller asks a CHECK of it, O(log n)
  local result = { now }
  for _, s in ipairs(stored) do
    if not OWN_ENTRY[s.alg] and s.alg ~= ENTRY and s.alg ~= SPILLED then
      result[#result + 1] = s.id
      result[#result + 1] = s.large and LARGE or s.alg
      result[#result + 1] = s.large and '' or log_bytes(state_of(s))
    end
  end
  return result
end

-- the live state of each requested counter
local states = {}
for i in pairs(found) do
  states[i] = state_of(found[i])
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
