-- ------------------------------------------------------------------------------------------------
-- the gap form of a sliding log <-> the canonical layout

-- the times (newest first) of a gap-form state expiring at expms
local function gaps_decode(state, expms)
  local times = { expms - unpack('>I4', state, 1) }
  local p, m = 5, 1
  while p <= #state do
    local b0 = byte(state, p)
    local width = b0 < 64 and 1 or b0 < 128 and 2 or b0 < 192 and 3 or 4
    local g = b0 % 64
    for k = 1, width - 1 do
      g = g * 256 + byte(state, p + k)
    end
    times[m + 1] = times[m] - g
    m = m + 1
    p = p + width
  end
  return times, m
end

-- the gap form of a state (bytes or decoded) expiring at second `seconds`, or nil if it cannot hold it
-- (a cost above 1, a gap of 2^30 ms or more, the newest entry not within 2^32 ms of the expiry)
local function gaps_encode(state, seconds)
  local times, costs, m = log_decode(state)
  for i = 1, m do
    if costs[i] ~= 1 then
      return nil
    end
  end
  local d = EPOCH_MS + seconds * 1000 - times[1]
  if d < 0 or d >= D_LIMIT then
    return nil
  end
  local out = { pack('>I4', d) }
  for i = 2, m do
    local g = times[i - 1] - times[i]
    if g >= GAP_LIMIT then
      return nil
    elseif g < 64 then
      out[i] = char(g)
    elseif g < 16384 then
      out[i] = pack('>I2', 16384 + g)
    elseif g < 4194304 then
      out[i] = pack('>I3', 8388608 + g)
    else
      out[i] = pack('>I4', 3221225472 + g)
    end
  end
  return table.concat(out)
end
