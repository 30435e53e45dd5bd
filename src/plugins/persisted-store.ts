import { LRUCache } from 'lru-cache';
import { closeRedis, createRedis, throttled } from '../redis.ts';

/** Where automatic persisted queries keep documents by their SHA-256 (hex); a failure is a miss. */
export interface DocumentStore {
  get(hash: string): Promise<string | undefined>;
  /** Keeps the document unless it is larger than the store allows. */
  set(hash: string, document: string): Promise<void>;
  close(): Promise<void>;
}

export interface DocumentStoreOptions {
  /** Documents kept in memory; the least recently used goes first. */
  maxDocuments: number;
  /** UTF-8 bytes of all documents kept in memory. */
  maxBytes: number;
  /** A larger document is never stored (it is still executed); absent: `maxBytes` bounds it. */
  maxDocumentBytes?: number | undefined;
  /** How long a stored document lives. */
  ttlMs: number;
  /** With a `redis://` URL, documents live in Redis, shared by every replica using it. */
  redisUrl: string | undefined;
  /** Told about Redis failures; the lookup then counts as a miss. */
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

function createRedisStore({
  redisUrl,
  maxDocumentBytes,
  maxBytes,
  ttlMs,
  onError,
}: DocumentStoreOptions & { redisUrl: string }): DocumentStore {
  const report = throttled(onError, 10_000);
  const redis = createRedis(redisUrl, report);
  return {
    async get(hash) {
      try {
        return (await redis.get(keyPrefix + hash)) ?? undefined;
      } catch (error) {
        report(error as Error);
        return undefined;
      }
    },
    async set(hash, document) {
      if (Buffer.byteLength(document) > Math.min(maxDocumentBytes ?? maxBytes, maxBytes)) return;
      await redis.set(keyPrefix + hash, document, 'PX', ttlMs).catch(report);
    },
    close: () => closeRedis(redis),
  };
}
