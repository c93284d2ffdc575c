-- The rules document and its digest, read together (one atomic step).
-- KEYS[1] the document (YAML)
-- ARGV[1] 'digest': only the SHA-1 (the cheap poll); 'full': SHA-1 and document
-- Returns {sha1 or '', document or ''}; '' means the key does not exist.
local doc = redis.call('GET', KEYS[1])
if not doc then
  return {'', ''}
end
if ARGV[1] == 'digest' then
  return {redis.sha1hex(doc), ''}
end
return {redis.sha1hex(doc), doc}
