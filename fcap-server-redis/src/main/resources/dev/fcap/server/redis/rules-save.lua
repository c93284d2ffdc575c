-- Compare-and-set of the rules document, with its revision and a bounded history.
-- KEYS[1] the document (YAML), KEYS[2] the revision counter, KEYS[3] the history list (newest first)
-- ARGV[1] the SHA-1 of the document the caller's change is based on ('' = the key must not exist)
-- ARGV[2] the new document
-- ARGV[3] the history entry's fields, JSON object members without braces
-- ARGV[4] history entries kept
-- Returns {1, new sha1, revision} when written; {0, current sha1 or ''} when the document is no
-- longer the one the change was based on (another node changed it first): nothing is written.
local cur = redis.call('GET', KEYS[1])
local curSha = cur and redis.sha1hex(cur) or ''
if curSha ~= ARGV[1] then
  return {0, curSha}
end
redis.call('SET', KEYS[1], ARGV[2])
local revision = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('LPUSH', KEYS[3], '{"revision":' .. revision .. ',"time":' .. ms .. ',' .. ARGV[3] .. '}')
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[4]) - 1)
return {1, redis.sha1hex(ARGV[2]), revision}
