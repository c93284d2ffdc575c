-- ------------------------------------------------------------------------------------------------
-- sliding-counter: width:i64 newest:i64 entries newest first: age:u16 count:u32
-- Loaded (its functions made) only for a step with a sliding counter: Redis makes every function
-- literal of the chunk on every call, and most steps have none (see ALGORITHMS in Gcra.lua)
local load_sliding_counter = needs[1] and function()
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
    local window, limit = spec.windows[1], spec.bounds[1] -- the bound: the limit less the headroom
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
    return r == now or not spec.refuses[1]
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
    if bucket < sc_oldest(now, spec.windows[1], width) then
      return state -- SlidingCounter.release: its sub-window no longer counts
    end
    for i = 1, n do
      if idx[i] == bucket then
        cnt[i] = math.max(0, cnt[i] - cost)
        if cnt[i] == 0 then
          table.remove(idx, i)
          table.remove(cnt, i)
          n = n - 1
        end
        return sc_encode(idx, cnt, n, width) -- pruning belongs to record: only the released unit goes
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

  return { evaluate = sc_evaluate, record = sc_record, release = sc_release, expires = sc_expires }
end
