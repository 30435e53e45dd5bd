import type { Redis } from 'ioredis';

/** What one family of keys may hold in Redis, shared by every replica writing to it. */
export interface RedisBounds {
  /** Entries at most. */
  maxEntries: number;
  /** Bytes at most: each entry's value (Lua's `#`, as `Buffer.byteLength` counts) and its `overhead`. */
  maxBytes: number;
  /**
   * What an entry of this name (a hash's: its name, a space and its field) costs Redis beyond its value (its name in
   * the key, the index and the sizes).
   */
  overhead?: (name: string) => number;
}

/**
 * Bounds of bytes alone, each entry's name counted as Redis holds it: in its key (a hash's field), the index and the
 * sizes, with the bookkeeping of each (some 256 bytes, measured). A small value weighs mostly that.
 */
export const byteBounds = (maxBytes: number): RedisBounds => ({
  maxEntries: Number.MAX_SAFE_INTEGER,
  maxBytes,
  overhead: (name) => 3 * Buffer.byteLength(name) + 256,
});

/** Stores and deletes the keys of one family, each write keeping the family within its bounds. */
export interface BoundedKeys {
  /** The Redis key of `name` (below the connection's prefix), to read it. */
  key(name: string): string;
  /**
   * Sets `family:name` to `value` for `ttlMs`; the others soonest to expire go until the bounds hold. An entry
   * that alone passes `maxBytes` is not stored (it would push every other out, then itself), and the name's older
   * value is deleted. `later`: `value` is a number, and one held as large or larger is kept (the store answers -1).
   */
  store(name: string, value: string, ttlMs: number, bounds: RedisBounds, later?: boolean): Promise<unknown>;
  /** Deletes `family:name` and its bytes from the count. */
  forget(name: string): Promise<unknown>;
}

/**
 * Stores and deletes the fields of one family of hashes, each write keeping the family within its bounds: an entry
 * is one field, counted and evicted alone; a hash lives as long as its longest-lived field.
 */
export interface BoundedHashes {
  /** The Redis key of the hash `name` (below the connection's prefix), to read it. */
  key(name: string): string;
  /**
   * Sets `field` of `family:name` to `value` for `ttlMs`, as BoundedKeys' `store` sets a key. With a `version` (epoch
   * ms it was produced), a field holding a later one (its value's first line JSON with a later `cachedAt`, as the HTTP
   * cache writes it) is kept, and the store answers -1: an older value whose write lands last must not replace it.
   */
  store(
    name: string,
    field: string,
    value: string | Buffer,
    ttlMs: number,
    bounds: RedisBounds,
    version?: number,
  ): Promise<unknown>;
  /**
   * Deletes `field` of `family:name`, or without it the whole hash, and their bytes from the count. With a `version`,
   * as `store` takes it, a field holding a later one is kept: what is deleted for an answer (one too big to keep) must
   * not take a newer answer another replica stored, or an older one whose write lands after would replace it.
   */
  forget(name: string, field?: string, version?: number): Promise<unknown>;
}

// Beside the family's keys: each entry by the epoch ms it expires, its size, and the sizes' sum. An entry of a
// family of keys is a name, whose key is the family's prefix (as the connection prefixed it) and the name; one of a
// family of hashes is a name, a space and a field (names carry no space). An entry gone by expiry leaves the index
// at the next write, which counts it out. `fields` says which kind of family the script works on.
const forgetFn = (fields: boolean) => `
local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
local fields = ${fields}
local function forget(name)
  local size = tonumber(redis.call('HGET', KEYS[3], name) or '0')
  redis.call('ZREM', KEYS[2], name)
  redis.call('HDEL', KEYS[3], name)
  if fields then
    local space = string.find(name, ' ', 1, true)
    redis.call('HDEL', prefix .. string.sub(name, 1, space - 1), string.sub(name, space + 1))
  else
    redis.call('DEL', prefix .. name)
  end
  -- Nothing counted, nothing to take off: a DECRBY would make a missing sum anew, with no expiry (and, the sum evicted,
  -- negative: a count the next store would take for good, the bound short by what the entries left hold).
  if size == 0 or redis.call('EXISTS', KEYS[4]) == 0 then return tonumber(redis.call('GET', KEYS[4]) or '0') end
  return tonumber(redis.call('DECRBY', KEYS[4], size))
end
-- A field's version: its value's first line JSON with a cachedAt (as the HTTP cache writes it), or nil.
local function versionOf(value)
  local line = value and string.find(value, '\\n', 1, true)
  if not line then return nil end
  local ok, meta = pcall(cjson.decode, string.sub(value, 1, line - 1))
  return ok and type(meta) == 'table' and tonumber(meta.cachedAt) or nil
end
`;

// One atomic round trip: drops what has expired, stores the value, then deletes the entries soonest to expire
// (never anything else) until both bounds hold. KEYS: the entry's key, the index, the sizes, the sum;
// ARGV: name, value, TTL in ms, most entries, most bytes, the entry's overhead in bytes, then the field of a hash and
// its version (see BoundedHashes' store), or for a key whether its value only moves later (see BoundedKeys' store).
// A key whose index entry is due but still lives is scored afresh rather than dropped: an older version of this
// script scored by the time stored. A field's entry is due when the field is (its
// hash lives as long as its longest field).
// `#!lua` (Redis 7): Redis refuses it whole while out of memory (`OOM` under `noeviction`), before it runs. Without it
// Redis checks only a script's first write, here a delete (which it allows), and every write after it went through.
const storeScript = (fields: boolean) => `#!lua${forgetFn(fields)}
local entry = fields and (ARGV[1] .. ' ' .. ARGV[7]) or ARGV[1]
-- A version (ARGV[8]): a field holding a later one (its first line JSON with a later cachedAt) is kept.
if fields and ARGV[8] then
  local held = versionOf(redis.call('HGET', KEYS[1], ARGV[7]))
  if held and held > tonumber(ARGV[8]) then return -1 end
end
-- A key's value that only moves later (ARGV[7] set): one held as large is kept.
if not fields and ARGV[7] then
  local held = tonumber(redis.call('GET', KEYS[1]))
  if held and held >= tonumber(ARGV[2]) then return -1 end
end
local ttl = tonumber(ARGV[3])
local size = #ARGV[2] + tonumber(ARGV[6])
-- Too big to keep: the older value of the entry goes all the same (it is not what was last stored).
if size > tonumber(ARGV[5]) then
  forget(entry)
  return 0
end
-- Redis may evict any one of the three on its own (allkeys-lru): the rest then counts bytes nothing can take off
-- again (the index alone finds them). Counted afresh: the copies left unindexed go by their own expiry.
local indexed = redis.call('EXISTS', KEYS[2]) == 1
local sized = redis.call('EXISTS', KEYS[3]) == 1
local sum = redis.call('GET', KEYS[4])
if indexed ~= sized or (indexed and not tonumber(sum or '')) or (not indexed and sum and tonumber(sum) ~= 0) then
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local left = fields and 0 or redis.call('PTTL', prefix .. name)
  if left > 0 then redis.call('ZADD', KEYS[2], now + left, name) else forget(name) end
end
forget(entry)
if fields then
  redis.call('HSET', KEYS[1], ARGV[7], ARGV[2])
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
end
redis.call('ZADD', KEYS[2], now + ttl, entry)
redis.call('HSET', KEYS[3], entry, size)
local total = tonumber(redis.call('INCRBY', KEYS[4], size))
while redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[4]) or total > tonumber(ARGV[5]) do
  total = forget(redis.call('ZRANGE', KEYS[2], 0, 0)[1])
end
for i = 2, 4 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
`;

// ARGV: name, a version ('' for none: see BoundedHashes' forget) and the field of a hash; a hash without one goes
// with every field's entry. With a version, a field holding a later one stays (its entry indexed, sized and counted
// as before), and its hash with it: it was stored after the answer this forget is for.
const forgetScript = (fields: boolean) => `${forgetFn(fields)}
local version = tonumber(ARGV[2])
local function later(field)
  local held = version and versionOf(redis.call('HGET', KEYS[1], field))
  return held and held > version
end
if fields and ARGV[3] then
  if not later(ARGV[3]) then forget(ARGV[1] .. ' ' .. ARGV[3]) end
elseif fields then
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if not later(field) then forget(ARGV[1] .. ' ' .. field) end
  end
  if not version then redis.call('DEL', KEYS[1]) end
else
  forget(ARGV[1])
end
`;

type Scripted = Redis & Record<string, (...args: Array<string | number | Buffer>) => Promise<unknown>>;

/** The scripts of a family of keys, or of hashes: the Redis keys of an entry, and the name and field it is of. */
function scriptsOf(connection: Redis, family: string, fields: boolean) {
  const kind = fields ? 'Hashes' : 'Keys';
  // defineCommand sends each script by its SHA once Redis knows it; defining it again is harmless.
  connection.defineCommand(`store${kind}Bounded`, { numberOfKeys: 4, lua: storeScript(fields) });
  connection.defineCommand(`forget${kind}Bounded`, { numberOfKeys: 4, lua: forgetScript(fields) });
  const redis = connection as Scripted;
  const key = (name: string) => `${family}:${name}`;
  const keys = (name: string) => [key(name), `${family}-index`, `${family}-sizes`, `${family}-bytes`];
  return {
    key,
    // `rest`: a hash's field and its version, or a key's flag that its value only moves later.
    store: (name: string, rest: string[], value: string | Buffer, ttlMs: number, bounds: RedisBounds) =>
      redis[`store${kind}Bounded`]!(
        ...keys(name),
        name,
        value,
        Math.max(1, Math.round(ttlMs)),
        bounds.maxEntries,
        bounds.maxBytes,
        // The entry's name and a hash's field.
        bounds.overhead?.([name, ...(fields ? rest.slice(0, 1) : [])].join(' ')) ?? 0,
        ...rest,
      ),
    forget: (name: string, field: string[], version?: number) =>
      redis[`forget${kind}Bounded`]!(...keys(name), name, version === undefined ? '' : String(version), ...field),
  };
}

/**
 * A family of keys (`apq:`, `lkg:`) whose count and bytes stay bounded in Redis whatever the replicas write:
 * without, a key per URL and credential kept for a day grew Redis with every page a caller read.
 */
export function createBoundedKeys(connection: Redis, family: string): BoundedKeys {
  const { key, store, forget } = scriptsOf(connection, family, false);
  return {
    key,
    forget: (name) => forget(name, []),
    store: (name, value, ttlMs, bounds, later) => store(name, later ? ['later'] : [], value, ttlMs, bounds),
  };
}

/** A family of hashes (`http-cache:`, one per URL, a field per variant) bounded the same way, field by field. */
export function createBoundedHashes(connection: Redis, family: string): BoundedHashes {
  const { key, store, forget } = scriptsOf(connection, family, true);
  return {
    key,
    forget: (name, field, version) => forget(name, field === undefined ? [] : [field], version),
    store: (name, field, value, ttlMs, bounds, version) =>
      store(name, version === undefined ? [field] : [field, String(version)], value, ttlMs, bounds),
  };
}
