import { LRUCache } from 'lru-cache';
import { createBoundedKeys } from '../redis-bounded.ts';
import { closeRedis, createRedis, replyWithin } from '../redis.ts';
import { sha256Hex } from './persisted-manifest.ts';

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

function createRedisStore({
  redisUrl,
  redisTimeoutMs,
  maxDocuments,
  maxDocumentBytes,
  maxBytes,
  ttlMs,
  onError,
}: DocumentStoreOptions & { redisUrl: string }): DocumentStore {
  const redis = createRedis(redisUrl, onError, redisTimeoutMs);
  const bounded = replyWithin(redisTimeoutMs);
  // Shared by every replica: at most maxDocuments of at most maxBytes in all, the oldest stored going first.
  const documents = createBoundedKeys(redis, 'apq');
  return {
    async get(hash) {
      try {
        const document = await bounded(() => redis.get(documents.key(hash)));
        // Only the document of this hash: one cut short, or anything else under its key, is a miss (the client
        // then sends the document, whose registration replaces it), never run in its place.
        return document !== null && sha256Hex(document) === hash ? document : undefined;
      } catch (error) {
        onError(error as Error);
        return undefined;
      }
    },
    async set(hash, document) {
      if (Buffer.byteLength(document) > Math.min(maxDocumentBytes ?? maxBytes, maxBytes)) return;
      await bounded(() => documents.store(hash, document, ttlMs, { maxEntries: maxDocuments, maxBytes })).catch(
        onError,
      );
    },
    close: () => closeRedis(redis),
  };
}
