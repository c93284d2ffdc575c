-- ------------------------------------------------------------------------------------------------
-- sliding-log (canonical layout, fcap-core's SlidingLog): flags:u8 newest:i64 entries newest
-- first: age:u32 (i64 if WIDE) [cost:u32 if COSTS]
local WIDE, COSTS = 1, 2
local band, bor = bit.band, bit.bor

-- the unit costs of every log of this call whose costs are all 1 (a gap-form log decoded, a unit
-- booked into one): one table, as long as the longest, read only (a change works on a copy:
-- log_decode's mutable), so that such a log has no costs table of its own. Made at its length by the
-- first gap-form log decoded (state_of), grown where a longer one is decoded or booked, inline: a
-- function made for it would cost each call of the general path.
local ONES = {}

-- tables of up to this many entries are made by one constructor at their size (filled one by one, a
-- table grows log2(n) times); under Lua's C stack limit (8,000) for unpack's results
local UNPACK_MAX = 4096

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

-- A state the general path read from the gap form, or recorded into, is kept DECODED until it is
-- written: a table { times = , costs = , n = } (the gap form is written from it, with no canonical
-- bytes in between); any other state is fcap-core's bytes. Every function here takes both. A state
-- read from the gap form keeps those bytes (gapform), and one booked from such a state after all its
-- entries names it (base), so that its gap form is the new gap in front of the old gaps
-- (GapForm.lua): a booking's log is not encoded again entry by entry.
local function log_decoded(times, costs, n, gapform, base)
  return n > 0 and { times = times, costs = costs, n = n, gapform = gapform, base = base } or nil
end

-- the decoded entries of a state; callers that modify them (record, release) pass mutable and get
-- their own copy, so the cached view (or the decoded state) stays intact
local function log_decode(state, mutable)
  if not state then
    return {}, {}, 0
  end
  local times, costs, n
  if type(state) == 'table' then
    times, costs, n = state.times, state.costs, state.n
  else
    if state ~= log_cache_state then
      log_cache_times, log_cache_costs, log_cache_n = log_decode_uncached(state)
      log_cache_state = state
    end
    times, costs, n = log_cache_times, log_cache_costs, log_cache_n
  end
  if not mutable then
    return times, costs, n
  end
  local t, c = {}, {}
  for i = 1, n do
    t[i], c[i] = times[i], costs[i]
  end
  return t, c, n
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

-- fcap-core's bytes of a state (READ answers them)
local function log_bytes(state)
  return type(state) == 'table' and log_encode(state.times, state.costs, state.n) or state
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

-- how many entries, newest first, are later than t: a binary search (the log is ordered), where a
-- walk would read every booking of a log that holds them, down to a walk of the last few entries.
-- Callers test the newest entry first and call only when it is later than t: the call costs more
-- than the answer of a log that holds no booking, the common case.
local function log_later(times, n, t)
  local lo, hi = 1, n + 1 -- the first entry at or before t is in [lo, hi]
  while hi - lo > 8 do
    local mid = lo + hi
    mid = (mid - mid % 2) / 2
    if times[mid] > t then
      lo = mid + 1
    else
      hi = mid
    end
  end
  while lo < hi and times[lo] > t do
    lo = lo + 1
  end
  return lo - 1
end

local function log_prune(times, costs, n, spec, now)
  local horizon = now - spec.maxwindow
  -- a record of a relaxed check keeps the whole window (SlidingLog.prune)
  local capacity = spec.keepall and math.huge or log_capacity(spec)
  -- booked: a window ending after now reads it; the capacity bounds what is before now (a small
  -- log is walked: a call costs more than the steps it spares)
  local newer, keep = 0, n > 0 and times[1] > now and log_later(times, n, now) or 0
  if costs == ONES and n - keep > 8 then
    local within = log_later(times, n, horizon)
    return within < keep + capacity and within or keep + capacity
  end
  while keep < n and times[keep + 1] > horizon and newer < capacity do
    newer = newer + costs[keep + 1]
    keep = keep + 1
  end
  return keep
end

-- SlidingLog.earliest: the first y >= x at which every window (s - W, s], s in [y, y + W), holds at
-- most room. Each holds y, so y is refused iff some window of length W holds y and more than room: a
-- run of consecutive entries, oldest a, newest b, with b - a < W, that holds more than room refuses
-- exactly (b - W, a + W). Taking for each entry, oldest first, the shortest such run from it, both
-- ends of these spans only grow: y moves to a + W past each span that holds it, and the first span
-- that begins at or after y ends the search. One pass over the entries (a booking's most work); a
-- log of unit costs, as every gap-form log is, has runs of room + 1 entries and no sums.
local function log_earliest(times, costs, n, window, room, x)
  local y, i = x, n
  while i >= 1 and times[i] + window <= y do
    i = i - 1 -- its spans end by y
  end
  if costs == ONES then -- the span step below written out twice: the sums' branch in one loop costs 40 %
    for k = i, room + 1, -1 do
      local a, b = times[k], times[k - room]
      if b - a < window then
        if b - window >= y then
          return y
        end
        a = a + window
        if a > y then
          y = a
        end
      end
    end
    return y
  end
  local j, sum = i, 0 -- the run from i: entries i down to j + 1, their cost sum
  while i >= 1 do
    while sum <= room and j >= 1 do
      sum = sum + costs[j]
      j = j - 1
    end
    if sum <= room then
      return y -- no run from i on holds more than room
    end
    local a, b = times[i], times[j + 1]
    if b - a < window then
      if b - window >= y then
        return y
      end
      a = a + window
      if a > y then
        y = a
      end
    end
    sum = sum - costs[i]
    i = i - 1
  end
  return y
end

-- SlidingLog.fullest: the most cost any window (s - W, s] holds for s in [x, x + W), the fullest a
-- message at x joins; a window holds the most where an entry enters it, so the windows ending at x
-- and at each entry in (x, x + W) are read, entries leaving as they pass
local function log_fullest(times, costs, n, window, x)
  local lo, hi, held = n, n, 0 -- lo: the oldest entry held; hi: the next to enter
  while hi >= 1 and times[hi] <= x do
    held = held + costs[hi]
    hi = hi - 1
  end
  local from = x - window
  while lo > hi and times[lo] <= from do
    held = held - costs[lo]
    lo = lo - 1
  end
  local most, last = held, x + window
  if costs == ONES then -- held is the entries from lo down to hi + 1: no sums (0.74x the loop below)
    for h = hi, 1, -1 do
      local s = times[h]
      if s >= last then
        break
      end
      from = s - window
      while times[lo] <= from do
        lo = lo - 1
      end
      if lo - h + 1 > most then
        most = lo - h + 1
      end
    end
    return most
  end
  for h = hi, 1, -1 do
    local s = times[h]
    if s >= last then
      break
    end
    held = held + costs[h]
    from = s - window
    while times[lo] <= from do
      held = held - costs[lo]
      lo = lo - 1
    end
    if held > most then
      most = held
    end
  end
  return most
end

-- SlidingLog.evaluateBooked: a log holding messages booked after now; each check reads every window
-- the message would join: used the fullest, retry the first instant none of them is full
local function log_evaluate_booked(times, costs, n, spec, now, cost, used, retry, at)
  local admitted = true
  for c = 1, spec.checks do
    local limit, window = spec.bounds[c], spec.windows[c]
    used[at + c] = log_fullest(times, costs, n, window, now)
    local r = NEVER -- (NEVER is false: no 'and NEVER or' here)
    if cost <= limit then
      r = log_earliest(times, costs, n, window, limit - cost, now)
    end
    retry[at + c] = r
    if r ~= now and spec.refuses[c] then
      admitted = false
    end
  end
  return admitted
end

local function log_evaluate(state, spec, align, now, cost, used, retry, at)
  local times, costs, n = log_decode(state)
  if n > 0 and times[1] > now then
    return log_evaluate_booked(times, costs, n, spec, now, cost, used, retry, at)
  end
  local admitted = true
  for c = 1, spec.checks do
    local limit, window = spec.bounds[c], spec.windows[c] -- the bound: the limit less the headroom
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
    if r ~= now and spec.refuses[c] then
      admitted = false
    end
  end
  return admitted
end

-- SlidingLog.bookings: the entries after now
local function log_bookings(state, spec, align, now)
  local times, _, n = log_decode(state)
  return n > 0 and times[1] > now and log_later(times, n, now) or 0
end

-- SlidingLog.admitsFrom: the first instant from x (at or after the decision's time, now) at which
-- every refusing check admits the message. from: each check's first admitting instant from now, at
-- from[at + c], as the step's evaluation found it. A log that holds nothing after now needs no
-- sweep at all: from now on its windows only lose entries, and the fullest window a message at y
-- joins is the one ending at y, so a check admits every instant from its first one on and none
-- before (max(y, from)). A log holding bookings is swept from y, unless y is now.
local function log_admits_from(state, spec, align, x, cost, from, at)
  local times, costs, n = log_decode(state)
  local plain = n == 0 or times[1] <= now
  local y, checks, agreed, c = x, spec.checks, 0, 0
  while agreed < checks do -- the checks in turn until each in a row admits y: each move is later, so it stops
    c = c % checks + 1
    if not spec.refuses[c] then
      agreed = agreed + 1
    elseif cost > spec.bounds[c] then
      return NEVER
    else
      local z
      if plain or y == now then
        z = from[at + c]
        z = z > y and z or y
      else
        z = log_earliest(times, costs, n, spec.windows[c], spec.bounds[c] - cost, y)
      end
      agreed = z == y and agreed + 1 or 1
      y = z
    end
  end
  return y
end

-- SlidingLog.insert: the message recorded at `at` (now, or booked later), pruned at now
local function log_book(state, spec, align, now, at, cost)
  local old, oldcosts, n = log_decode(state)
  -- booked later, or the clock went back: keep the log ordered newest first
  local k = n > 0 and old[1] > at and log_later(old, n, at) or 0
  -- a copy with the entry in place (the decoded state may be shared: the same counter twice in a
  -- step); a booking is most often the newest entry: one constructor. A unit booked into a log of
  -- unit costs shares the unit-cost table.
  local units = oldcosts == ONES and cost == 1
  local times, costs
  if k == 0 and n < UNPACK_MAX then
    times, costs = { at, tunpack(old, 1, n) }, not units and { cost, tunpack(oldcosts, 1, n) }
  else -- before a later booking, or the clock went back: both copied in one pass
    times, costs = {}, {}
    for i = 1, k do
      times[i], costs[i] = old[i], oldcosts[i]
    end
    times[k + 1], costs[k + 1] = at, cost
    for i = k + 1, n do
      times[i + 1], costs[i + 1] = old[i], oldcosts[i]
    end
  end
  if units then
    for i = #ONES + 1, n + 1 do
      ONES[i] = 1
    end
    costs = ONES
  end
  local base = units and k == 0 and type(state) == 'table' and state.gapform and state
  return log_decoded(times, costs, log_prune(times, costs, n + 1, spec, now), nil, base)
end

local function log_record(state, spec, align, now, cost)
  return log_book(state, spec, align, now, now, cost)
end

local function log_release(state, spec, align, now, eventtime, cost)
  local times, costs, n = log_decode(state, true)
  for i = 1, n do
    if times[i] == eventtime and costs[i] == cost then
      table.remove(times, i)
      table.remove(costs, i)
      return log_encode(times, costs, n - 1) -- pruning belongs to record: only the released event goes
    end
  end
  return state
end

local function log_expires(state, spec, align)
  if type(state) == 'table' then
    return state.times[1] + spec.maxwindow
  elseif not state or #state <= 9 then
    return nil
  end
  return unpack('>i8', state, 2) + spec.maxwindow
end
