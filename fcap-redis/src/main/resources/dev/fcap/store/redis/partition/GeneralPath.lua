-- ================================================================================================
-- GENERAL PATH: the plain mirror of fcap-core, from the request again (nothing was written)
nin, markerexp, spill, reply = 0, false, false, false -- counted again below, if the fast path began

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

local function readvarint(s, p)
  local v, scale = 0, 1
  while true do
    local c = byte(s, p)
    p = p + 1
    if c < 128 then
      return v + c * scale, p
    end
    v = v + (c - 128) * scale
    scale = scale * 128
  end
end

local function varint(v)
  local s = ''
  while v >= 128 do
    s = s .. char(v % 128 + 128)
    v = floor(v / 128)
  end
  return s .. char(v)
end
