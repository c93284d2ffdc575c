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
    if #ONES == 0 and m <= UNPACK_MAX then
      ONES = { byte(string.rep('\1', m), 1, m) } -- at its size by one constructor; no log holds it yet
    end
    for i = #ONES + 1, m do
      ONES[i] = 1
    end
    s.state = log_decoded(times, ONES, m, s.state)
  end
  return s.state
end

-- an expiry in ms as the i32 seconds since 2020 a counter keeps: rounded up, clamped (as in
-- MemoryStore). The remainder is exact while the seconds fit an i32; beyond, the result is clamped.
local function to_seconds(ms)
  local x = ms - EPOCH_MS
  local r = x % 1000
  local s = (x - r) / 1000 + (r > 0 and 1 or 0)
  return s > 2147483647 and 2147483647 or s < -2147483647 and -2147483647 or s
end

-- a counter as the value holds it; a sliding log in its gap form where it fits
local function encode_counter(id, alg, seconds, state)
  if alg == 0 then
    local gaps = gaps_encode(state, seconds)
    if gaps then
      alg, state = GAPS, gaps
    else
      state = log_bytes(state)
    end
  end
  return varint(#id) .. id .. pack('>Bi4', alg, seconds) .. varint(#state) .. state
end

load_algorithms(counters)

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
