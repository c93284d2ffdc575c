-- ------------------------------------------------------------------------------------------------
-- fixed-window: last:i64 count:u32; with bookings one (last, count) per window, oldest first, from
-- now's window on (FixedWindow's "Bookings")
-- Loaded only for a step with a fixed window, as the sliding counter is
local load_fixed_window = needs[FIXED] and function()
  local FW_SIZE = 12

  -- FixedWindow.windowStart and windowEnd: the window holding t; after the first period of a calendar
  -- (spec.periods, the ends in ms after align), the period holding t, and past the last one windows
  -- of its length; else (and before align) windows of spec.windows[1]
  local function fw_bounds(t, spec, align)
    local window, ends = spec.windows[1], spec.periods
    if not ends or t < align + window then
      local start = floordiv(t - align, window) * window + align
      return start, start + window
    end
    local n, i = #ends, 2
    while i <= n and t >= align + ends[i] do
      i = i + 1
    end
    if i <= n then
      return align + ends[i - 1], align + ends[i]
    end
    local from, length = align + ends[n], ends[n] - (n > 1 and ends[n - 1] or 0)
    local start = from + floordiv(t - from, length) * length
    return start, start + length
  end

  local function fw_start(t, spec, align)
    return (fw_bounds(t, spec, align))
  end

  -- FixedWindow.countAt: the count of the window holding t
  local function fw_count_at(state, spec, align, t)
    local start, finish = fw_bounds(t, spec, align)
    local count = 0
    for e = 1, #state, FW_SIZE do
      local last, c = unpack('>i8I4', state, e)
      if last >= start and last < finish then
        count = count + c
      end
    end
    return count
  end

  -- FixedWindow.firstWithRoom: x, or the start of the first later window that holds at most room; one
  -- pass, the entries being kept by window, oldest first
  local function fw_first_with_room(state, spec, align, x, room)
    local t, e, len = x, 1, state and #state or 0
    while true do
      local start, finish = fw_bounds(t, spec, align)
      local count = 0
      while e <= len do
        local last, c = unpack('>i8I4', state, e)
        if last >= finish then
          break
        end
        if last >= start then
          count = count + c
        end
        e = e + FW_SIZE
      end
      if count <= room then
        return t
      end
      t = finish
    end
  end

  -- FixedWindow.bookings: the windows after now's
  local function fw_bookings(state, spec, align, now)
    local _, after = fw_bounds(now, spec, align)
    local booked = 0
    for e = 1, (state and #state or 0), FW_SIZE do
      if unpack(">i8", state, e) >= after then
        booked = booked + 1
      end
    end
    return booked
  end

  -- whether the state holds a window after now's (a booking): the windows are then read one by one
  local function fw_booked(state, spec, align, now)
    local _, finish = fw_bounds(now, spec, align)
    return state and (#state > FW_SIZE or unpack('>i8', state, 1) >= finish)
  end

  local function fw_evaluate(state, spec, align, now, cost, used, retry, at)
    local limit = spec.bounds[1] -- the bound: the limit less the headroom
    if fw_booked(state, spec, align, now) then
      used[at + 1] = fw_count_at(state, spec, align, now)
      local r = NEVER -- (NEVER is false: no 'and NEVER or' here)
      if cost <= limit then
        r = fw_first_with_room(state, spec, align, now, limit - cost)
      end
      retry[at + 1] = r
      return r == now or not spec.refuses[1]
    end
    local start = fw_start(now, spec, align)
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
      local _, finish = fw_bounds(last, spec, align)
      r = finish
    end
    retry[at + 1] = r
    return r == now or not spec.refuses[1]
  end

  local function fw_admits_from(state, spec, align, x, cost)
    if not spec.refuses[1] then
      return x
    end
    local limit = spec.bounds[1]
    if cost > limit then
      return NEVER
    end
    return fw_first_with_room(state, spec, align, x, limit - cost)
  end

  -- FixedWindow.add: the message counted in the window holding at, the windows ended before now's gone
  local function fw_book(state, spec, align, now, at, cost)
    local current, target = fw_start(now, spec, align), fw_start(at, spec, align)
    local out, added = {}, false
    for e = 1, (state and #state or 0), FW_SIZE do
      local last, count = unpack('>i8I4', state, e)
      if last >= current then -- else a window that has ended
        local start = fw_start(last, spec, align)
        if not added and start > target then
          out[#out + 1] = pack('>i8I4', at, cost)
          added = true
        end
        if not added and start == target then
          last, count, added = math.max(last, at), count + cost, true
        end
        out[#out + 1] = pack('>i8I4', last, count)
      end
    end
    if not added then
      out[#out + 1] = pack('>i8I4', at, cost)
    end
    return table.concat(out)
  end

  local function fw_record(state, spec, align, now, cost)
    if fw_booked(state, spec, align, now) then
      return fw_book(state, spec, align, now, now, cost)
    end
    local start = fw_start(now, spec, align)
    if state then
      local l = unpack('>i8', state, 1)
      if l >= start then
        return pack('>i8I4', math.max(now, l), unpack('>I4', state, 9) + cost)
      end
    end
    return pack('>i8I4', now, cost)
  end

  local function fw_release(state, spec, align, now, eventtime, cost)
    if state and #state > FW_SIZE then
      -- FixedWindow.releaseBooked: from the live window that holds the event, if any
      local current = fw_start(now, spec, align)
      for e = 1, #state, FW_SIZE do
        local last, count = unpack('>i8I4', state, e)
        local start, finish = fw_bounds(last, spec, align)
        if last >= current and eventtime >= start and eventtime < finish then
          count = count - cost
          local rest = sub(state, 1, e - 1) .. (count > 0 and pack('>i8I4', last, count) or '')
            .. sub(state, e + FW_SIZE)
          return #rest > 0 and rest or nil
        end
      end
      return state
    end
    -- FixedWindow.release: only a message of the count's window (the newest message's), while live
    if not state or unpack('>i8', state, 1) < fw_start(now, spec, align)
        or eventtime < fw_start(unpack('>i8', state, 1), spec, align) then
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
    local _, finish = fw_bounds(unpack('>i8', state, #state - FW_SIZE + 1), spec, align)
    return finish -- the last window's end
  end

  return { evaluate = fw_evaluate, record = fw_record, release = fw_release, expires = fw_expires,
           admits_from = fw_admits_from, book = fw_book, bookings = fw_bookings }
end
