-- ------------------------------------------------------------------------------------------------
-- gcra: tat:i64 interval:i64, both in microseconds; a state written at another interval (the rule
-- was edited) is rescaled to the same number of messages in flight, rounded up, plus 1 us
-- Loaded only for a step with a GCRA counter, as the sliding counter is
local load_gcra = needs[3] and function()
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
    local bound = spec.bounds[1] -- the burst this message may use: the limit less its headroom
    local nowus = now * 1000
    local tat = gcra_tat(state, t, nowus)
    used[at + 1] = math.min(spec.limits[1], ceildiv(tat - nowus, t))
    local r
    if tat - nowus + cost * t <= bound * t then
      r = now
    elseif cost > bound then
      r = NEVER
    else
      r = ceildiv(tat - (bound - cost) * t, 1000)
    end
    retry[at + 1] = r
    return r == now or not spec.refuses[1]
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
    -- Gcra.release: only what is left of the event's cell [eventtime, eventtime + cost T)
    local held = math.min(cost * t, eventtime * 1000 + cost * t - nowus)
    if held <= 0 then
      return state
    end
    local tat = gcra_tat(state, t, nowus) - held
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

  return { evaluate = gcra_evaluate, record = gcra_record, release = gcra_release, expires = gcra_expires }
end

-- algorithm codes are the ordinals of dev.fcap.model.Algorithm. Only the sliding log's functions are
-- made on every call of the general path; the others' when a step has such a counter (load, below).
-- admits_from and book: the instant a booking may take, and the booking (only logs and fixed
-- windows book: the engine refuses a deferral the others would decide; never is the safe answer)
local never_admits = (needs[1] or needs[3]) and function()
  return NEVER
end

local ALGORITHMS = {
  [0] = { evaluate = log_evaluate, record = log_record, release = log_release, expires = log_expires,
          admits_from = log_admits_from, book = log_book, bookings = log_bookings },
}
local LOADERS = { [1] = load_sliding_counter, [2] = load_fixed_window, [3] = load_gcra }

-- the algorithms of `counters`, made if not yet
local function load_algorithms(counters)
  for _, c in ipairs(counters) do
    if not ALGORITHMS[c.alg] then
      ALGORITHMS[c.alg] = LOADERS[c.alg]()
      ALGORITHMS[c.alg].admits_from = ALGORITHMS[c.alg].admits_from or never_admits
    end
  end
end
