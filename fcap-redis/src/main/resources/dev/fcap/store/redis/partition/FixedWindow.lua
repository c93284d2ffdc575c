-- ------------------------------------------------------------------------------------------------
-- fixed-window: last:i64 count:u32

local function fw_start(t, window, align)
  return floordiv(t - align, window) * window + align
end

local function fw_evaluate(state, spec, align, now, cost, used, retry, at)
  local window, limit = spec.windows[1], spec.bounds[1] -- the bound: the limit less the headroom
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
  return r == now or not spec.refuses[1]
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
  -- FixedWindow.release: only a message of the count's window (the newest message's), while live
  local window = spec.windows[1]
  if not state or unpack('>i8', state, 1) < fw_start(now, window, align)
      or eventtime < fw_start(unpack('>i8', state, 1), window, align) then
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
