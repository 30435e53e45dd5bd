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
  /** UTF-8 bytes of all documents kept in memory. */
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
// A sorted set of the stored hashes by the time they were stored, shared by every replica.
const indexKey = 'apq-index';

// One atomic round trip: stores the document, then deletes the oldest ones past the bound.
// KEYS: the document's key, the index; ARGV: hash, document, TTL in ms, most documents kept.
const storeScript = `
local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now, ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  for _, hash in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do redis.call('DEL', prefix .. hash) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
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
  redis.defineCommand('storeApq', { numberOfKeys: 2, lua: storeScript });
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
      await bounded(() => store.call(redis, keyPrefix + hash, indexKey, hash, document, ttlMs, maxDocuments)).catch(
        onError,
      );
    },
    close: () => closeRedis(redis),
  };
}
