import { LRUCache } from 'lru-cache';
import { closeRedis, createRedis, replyWithin } from '../redis.ts';

/** Where automatic persisted queries keep documents by their SHA-256 (hex); a failure is a miss. */
export interface DocumentStore {
  get(hash: string): Promise<string | undefined>;
  /** Keeps the document unless it is larger than the store allows. */
  set(hash: string, document: string): Promise<void>;
  close(): Promise<void>;
}

export interface DocumentStoreOptions {
  /** Documents kept; in memory the least recently used goes first, in Redis the oldest stored. */
  maxDocuments: number;
  /** UTF-8 bytes of all documents kept, in memory or in Redis. */
  maxBytes: number;
  /** A larger document is never stored (it is still executed); absent: `maxBytes` bounds it. */
  maxDocumentBytes?: number | undefined;
  /** How long a stored document lives. */
  ttlMs: number;
  /** With a `redis://` URL, documents live in Redis, shared by every replica using it. */
  redisUrl: string | undefined;
  /** Longest wait for one Redis reply; a lookup that takes longer is a miss, a registration is skipped. */
  redisTimeoutMs: number;
  /** Told about each Redis failure; the lookup then counts as a miss. */
  onError: (error: Error) => void;
}

/** The in-memory LRU store, or the Redis one when `redisUrl` is set. */
export function createDocumentStore(options: DocumentStoreOptions): DocumentStore {
  return options.redisUrl ? createRedisStore({ ...options, redisUrl: options.redisUrl }) : createMemoryStore(options);
}

function createMemoryStore({ maxDocuments, maxBytes, maxDocumentBytes, ttlMs }: DocumentStoreOptions): DocumentStore {
  const cache = new LRUCache<string, string>({
    max: maxDocuments,
    maxSize: maxBytes,
    maxEntrySize: Math.min(maxDocumentBytes ?? maxBytes, maxBytes),
    sizeCalculation: (document) => Buffer.byteLength(document),
    ttl: ttlMs,
  });
  return {
    get: async (hash) => cache.get(hash),
    set: async (hash, document) => void cache.set(hash, document),
    close: async () => cache.clear(),
  };
}

// Below the `pim-graphql:` prefix every Redis key of the service has.
const keyPrefix = 'apq:';
// Shared by every replica: the stored hashes by the time they were stored, their sizes, and the sizes' sum.
const indexKeys = ['apq-index', 'apq-sizes', 'apq-bytes'];

// One atomic round trip: stores the document, then deletes the oldest documents (never anything
// else) until both bounds hold. Lua's # counts bytes, as Buffer.byteLength does.
// KEYS: the document's key, the index, the sizes, the sum; ARGV: hash, document, TTL in ms, most documents, most bytes.
const storeScript = `
local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
local ttl = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local function forget(hash)
  local size = tonumber(redis.call('HGET', KEYS[3], hash) or '0')
  redis.call('ZREM', KEYS[2], hash)
  redis.call('HDEL', KEYS[3], hash)
  redis.call('DEL', prefix .. hash)
  return tonumber(redis.call('DECRBY', KEYS[4], size))
end
for _, hash in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl)) do forget(hash) end
forget(ARGV[1])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], #ARGV[2])
local total = tonumber(redis.call('INCRBY', KEYS[4], #ARGV[2]))
while redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[4]) or total > tonumber(ARGV[5]) do
  total = forget(redis.call('ZRANGE', KEYS[2], 0, 0)[1])
end
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
`;

function createRedisStore({
  redisUrl,
  redisTimeoutMs,
  maxDocuments,
  maxDocumentBytes,
  maxBytes,
  ttlMs,
  onError,
}: DocumentStoreOptions & { redisUrl: string }): DocumentStore {
  const redis = createRedis(redisUrl, onError);
  const bounded = replyWithin(redisTimeoutMs);
  // defineCommand sends the script by its SHA once Redis knows it.
  redis.defineCommand('storeApq', { numberOfKeys: 1 + indexKeys.length, lua: storeScript });
  const store = (redis as typeof redis & { storeApq(...args: Array<string | number>): Promise<unknown> }).storeApq;
  return {
    async get(hash) {
      try {
        return (await bounded(() => redis.get(keyPrefix + hash))) ?? undefined;
      } catch (error) {
        onError(error as Error);
        return undefined;
      }
    },
    async set(hash, document) {
      if (Buffer.byteLength(document) > Math.min(maxDocumentBytes ?? maxBytes, maxBytes)) return;
      const args = [hash, document, ttlMs, maxDocuments, maxBytes];
      await bounded(() => store.call(redis, keyPrefix + hash, ...indexKeys, ...args)).catch(onError);
    },
    close: () => closeRedis(redis),
  };
}
