"""The design's Lua scripts: each state change of a message is one script, so it is atomic in Redis.

Every script takes KEYS[1] = the queue's key prefix and KEYS[2] = the namespace's, and ARGV[1] = now (seconds,
the caller's clock). Numbers go back to Python as strings: Redis would truncate a Lua number to an integer.

Keys: {queue}:due (sorted set: live message ids by visible-at), {queue}:seq (send order), {queue}:g:{group}
(FIFO: a group's live ids in order), {queue}:dedup (FIFO: dedup id -> "id|sent at"), {ns}:m:{id} (hash: queue,
body, seq, group, count, sent_at, first, received_at, handle, state, gone, ver), {ns}:h:{handle} -> "{issuing
queue}|{id}" (a handle addresses its message only through the queue that issued it), {ns}:ids (counter).
"""

SEND = """
local P, NS = KEYS[1], KEYS[2]
local now, body, delay, group, dedup, window = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5],
    tonumber(ARGV[6])
if dedup ~= '' then
  local earlier = redis.call('HGET', P .. ':dedup', dedup)
  if earlier then
    local sep = string.find(earlier, '|', 1, true)
    if now < tonumber(string.sub(earlier, sep + 1)) + window then
      return {string.sub(earlier, 1, sep - 1), 'duplicate'}
    end
  end
end
local id = 'm' .. redis.call('INCR', NS .. ':ids')
local seq = redis.call('INCR', P .. ':seq')
local state = 'ready'
if delay > 0 then state = 'delayed' end
redis.call('HSET', NS .. ':m:' .. id, 'queue', P, 'body', body, 'seq', seq, 'group', group, 'count', 0,
           'sent_at', ARGV[1], 'first', '', 'received_at', '', 'handle', '', 'state', state, 'gone', '', 'ver', 0)
redis.call('ZADD', P .. ':due', now + delay, id)
if group ~= '' then redis.call('RPUSH', P .. ':g:' .. group, id) end
if dedup ~= '' then redis.call('HSET', P .. ':dedup', dedup, id .. '|' .. ARGV[1]) end
return {id, 'new'}
"""

# A receive: the receivable messages in send order (FIFO: only each group's prefix up to its first hidden
# message), each given a new handle and hidden until now + the timeout. A message received maxReceiveCount
# times already moves to the dead-letter queue instead. FIFO: a receive retried with the same attempt id within
# the window answers as the first did, unless one of its messages changed since (each change bumps its 'ver').
# A replayed answer is final, even empty. The later tries of one long poll are the same request, not a retry:
# they pass replay '' and look afresh.
RECEIVE = """
local P, NS = KEYS[1], KEYS[2]
local now, max, timeout = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local max_receives, dead_letter, attempt, window = tonumber(ARGV[4]), ARGV[5], ARGV[6], tonumber(ARGV[7])
if attempt ~= '' and ARGV[8] ~= '' then
  local saved = redis.call('HGET', P .. ':attempts', attempt)
  if saved then
    saved = cjson.decode(saved)
    local same = now < saved.at + window
    for id, ver in pairs(saved.vers) do
      if redis.call('HGET', NS .. ':m:' .. id, 'ver') ~= ver then same = false end
    end
    if same then return {'replayed', saved.rows} end
  end
end
local items = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. ':due', '-inf', ARGV[1])) do
  local m = redis.call('HMGET', NS .. ':m:' .. id, 'seq', 'group', 'count', 'body', 'first')
  table.insert(items, {id = id, seq = tonumber(m[1]), group = m[2], count = tonumber(m[3]), body = m[4],
                       first = m[5]})
end
table.sort(items, function(a, b) return a.seq < b.seq end)
local function visible(id)
  local score = redis.call('ZSCORE', P .. ':due', id)
  return score and tonumber(score) <= now
end
local allowed = {}
for _, item in ipairs(items) do
  allowed[item.id] = true
  if item.group ~= '' then
    for _, other in ipairs(redis.call('LRANGE', P .. ':g:' .. item.group, 0, -1)) do
      if other == item.id then break end
      if not visible(other) then allowed[item.id] = false break end
    end
  end
end
local out = {}
for _, item in ipairs(items) do
  local key = NS .. ':m:' .. item.id
  if not allowed[item.id] then
  elseif max_receives > 0 and item.count >= max_receives then
    redis.call('ZREM', P .. ':due', item.id)
    if item.group ~= '' then redis.call('LREM', P .. ':g:' .. item.group, 0, item.id) end
    redis.call('HSET', key, 'queue', dead_letter, 'seq', redis.call('INCR', dead_letter .. ':seq'), 'handle', '',
               'state', 'ready')
    redis.call('HINCRBY', key, 'ver', 1)
    redis.call('ZADD', dead_letter .. ':due', now, item.id)
    if item.group ~= '' then redis.call('RPUSH', dead_letter .. ':g:' .. item.group, item.id) end
  elseif #out < max then
    local handle = 'h' .. redis.call('INCR', NS .. ':ids') .. '.' .. item.id
    local first = item.first
    if first == '' then first = ARGV[1] end
    redis.call('HSET', key, 'handle', handle, 'count', item.count + 1, 'first', first, 'received_at', ARGV[1],
               'state', 'inflight')
    redis.call('HINCRBY', key, 'ver', 1)
    redis.call('SET', NS .. ':h:' .. handle, P .. '|' .. item.id)
    redis.call('ZADD', P .. ':due', now + timeout, item.id)
    table.insert(out, {item.id, item.body, handle, tostring(item.count + 1), first})
  end
end
if attempt ~= '' then
  local vers = {}
  for _, row in ipairs(out) do vers[row[1]] = redis.call('HGET', NS .. ':m:' .. row[1], 'ver') end
  redis.call('HSET', P .. ':attempts', attempt, cjson.encode({at = now, rows = out, vers = vers}))
end
return {'fresh', out}
"""

# What a change and a delete both ask of a handle: the message it addresses, only through the queue that issued
# it (nil otherwise); and whether that message is in flight now, and the handle its current receipt.
ADDRESSED = """
local function addressed(P, NS, handle)
  local issued = redis.call('GET', NS .. ':h:' .. handle)
  if not issued then return nil end
  local sep = string.find(issued, '|', 1, true)
  if string.sub(issued, 1, sep - 1) ~= P then return nil end
  return string.sub(issued, sep + 1)
end
local function receipt(P, NS, id, handle, now)
  local m = redis.call('HMGET', NS .. ':m:' .. id, 'handle', 'state')
  local score = tonumber(redis.call('ZSCORE', P .. ':due', id)) or 0  -- not in the set: not in flight
  return m[2] == 'inflight' and score > now, m[1] == handle
end
"""

# A change of visibility through a handle. Answers: {'ok'} | {'ok', new handle, deadline} (a minted handle) |
# {'malformed'} | {'gone'} | {'not current'} | {'expired'} | {'beyond ceiling'}.
CHANGE = ADDRESSED + """
local P, NS = KEYS[1], KEYS[2]
local now, handle, timeout = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local stale_ok, fifo, ceiling, mint, lock = ARGV[4] == '1', ARGV[5] == '1', tonumber(ARGV[6]), ARGV[7] == '1',
    ARGV[8] == '1'
local id = addressed(P, NS, handle)
if not id then
  local key = NS .. ':m:' .. handle
  if lock and redis.call('HGET', key, 'queue') == P and redis.call('HGET', key, 'gone') == ''
      and redis.call('HGET', key, 'count') == '0' then
    redis.call('ZADD', P .. ':due', now + timeout, handle)
    redis.call('HSET', key, 'state', 'locked')
    redis.call('HINCRBY', key, 'ver', 1)
    return {'ok'}
  end
  return {'malformed'}
end
local key = NS .. ':m:' .. id
local m = redis.call('HMGET', key, 'queue', 'gone', 'received_at')
if m[1] ~= P or m[2] ~= '' then return {'gone'} end
local in_flight, current = receipt(P, NS, id, handle, now)
if mint then
  if not (current and in_flight) then return {'not current'} end
  local fresh = 'h' .. redis.call('INCR', NS .. ':ids') .. '.' .. id
  redis.call('SET', NS .. ':h:' .. fresh, P .. '|' .. id)
  redis.call('HSET', key, 'handle', fresh)
  redis.call('HINCRBY', key, 'ver', 1)
  redis.call('ZADD', P .. ':due', now + timeout, id)
  return {'ok', fresh, tostring(now + timeout)}
end
if fifo and not (current and in_flight) then return {'expired'} end
if not current and not stale_ok then return {'not current'} end
if ceiling > 0 and now + timeout > tonumber(m[3]) + ceiling then return {'beyond ceiling'} end
redis.call('ZADD', P .. ':due', now + timeout, id)
redis.call('HSET', key, 'state', 'inflight')
redis.call('HINCRBY', key, 'ver', 1)
return {'ok'}
"""

# A delete through a handle. Answers: {'ok'} | {'malformed'} | {'gone'} | {'not current'} | {'expired'}.
DELETE = ADDRESSED + """
local P, NS = KEYS[1], KEYS[2]
local now, handle, fifo, stale_ok = tonumber(ARGV[1]), ARGV[2], ARGV[3] == '1', ARGV[4] == '1'
local id = addressed(P, NS, handle)
if not id then return {'malformed'} end
local key = NS .. ':m:' .. id
local m = redis.call('HMGET', key, 'queue', 'gone', 'group')
if m[1] ~= P or m[2] ~= '' then return {'gone'} end
local in_flight, current = receipt(P, NS, id, handle, now)
if fifo and not (current and in_flight) then return {'expired'} end
if not current and not stale_ok then return {'not current'} end
redis.call('ZREM', P .. ':due', id)
if m[3] ~= '' then redis.call('LREM', P .. ':g:' .. m[3], 0, id) end
redis.call('HSET', key, 'gone', 'deleted')
redis.call('HINCRBY', key, 'ver', 1)
return {'ok'}
"""

# Purge: every live message goes, in flight or not.
PURGE = """
local P, NS = KEYS[1], KEYS[2]
for _, id in ipairs(redis.call('ZRANGE', P .. ':due', 0, -1)) do
  local key = NS .. ':m:' .. id
  local group = redis.call('HGET', key, 'group')
  if group ~= '' then redis.call('LREM', P .. ':g:' .. group, 0, id) end
  redis.call('HSET', key, 'gone', 'purged')
  redis.call('HINCRBY', key, 'ver', 1)
end
redis.call('DEL', P .. ':due')
return {'ok'}
"""
