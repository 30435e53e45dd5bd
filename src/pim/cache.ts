import { cacheStores, interceptors, type Dispatcher } from 'undici';
import { closeRedis, createRedis } from '../redis.ts';
import { createAnswerStore, type AnswerStore } from './answer-store.ts';
import type { CacheKey, CacheStore, GetResult } from './cache-store.ts';
import type { Answer } from './types.ts';
import { createRedisCacheStore } from './redis-cache-store.ts';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

export interface ResponseCacheOptions {
  /** Maps the request headers to a key that differs whenever the caller's credential does. */
  credentialKey: (headers: Headers) => string;
  /** Scheme, host and path prefix the client puts in front of every request path. */
  baseUrl: string;
  /** Freshness, in ms, of 2xx answers that carry no caching headers; 0 leaves them uncached. */
  defaultTtlMs: number;
  /** With a `redis://` URL, responses are stored in Redis and shared by every instance using it. */
  redisUrl: string | undefined;
  /** Bound on each in-process copy: the stored responses (without Redis) and the parsed answers. */
  maxBytes: number;
  /** Largest body stored. */
  maxEntryBytes: number;
  /** Longest wait for one Redis reply; a lookup that takes longer is a miss, a write is skipped. */
  redisTimeoutMs: number;
  /** Told about each Redis failure; the call then goes on as a cache miss. */
  onError: (error: Error) => void;
}

/**
 * The undici interceptor to compose on the upstream Agent, the fast path for fresh answers
 * already parsed, and the store's clean-up. The client calls `lookup(path, headers)` before a
 * call and answers with its result when defined; after parsing a 2xx body it calls
 * `remember(path, headers, answer)`. `path` is the request path after the base URL, as sent.
 */
export interface ResponseCache {
  interceptor: Dispatcher.DispatcherComposeInterceptor;
  /** A fresh cached answer, its body parsed (frozen, shared by callers), or undefined. */
  lookup(path: string, headers: Headers): Answer | undefined;
  /** Keeps a parsed answer for later lookups while the HTTP cache holds its response fresh. */
  remember(path: string, headers: Headers, answer: Answer): void;
  close(): Promise<void>;
}

/**
 * Creates the HTTP cache for upstream GETs: undici's cache interceptor, which follows the
 * upstream's Cache-Control, Age and ETag (revalidating with If-None-Match) and never stores
 * `no-store`, over a store partitioned per credential so one caller never sees another's answer.
 */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { credentialKey, defaultTtlMs, redisUrl, maxBytes, maxEntryBytes, onError } = options;
  const redis = redisUrl ? createRedis(redisUrl, onError) : undefined;
  const inner = redis
    ? createRedisCacheStore({ redis, maxEntryBytes, replyTimeoutMs: options.redisTimeoutMs, onError })
    : new cacheStores.MemoryCacheStore({ maxSize: maxBytes, maxEntrySize: maxEntryBytes });
  const answers = createAnswerStore({ maxBytes });
  const interceptor = interceptors.cache({
    store: partitionByCredential(inner, credentialKey, answers),
    methods: ['GET'],
    // Every entry is private to one credential, so the rules of a private cache apply.
    type: 'private',
    ...(defaultTtlMs > 0 ? { cacheByDefault: defaultTtlMs } : {}),
  });
  const base = new URL(options.baseUrl);
  const prefix = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
  const answerKey = (path: string, headers: Headers) => `${prefix}${path}#${credentialKey(headers)}`;
  return {
    interceptor,
    lookup: (path, headers) => answers.lookup(answerKey(path, headers), headers),
    remember: (path, headers, answer) => answers.remember(answerKey(path, headers), headers, answer),
    close: async () => void (redis && (await closeRedis(redis))),
  };
}

// Puts the credential key in the stored path; the store never sees the raw credential. Fresh
// hits open an entry in `answers`, which the client then fills with the parsed body.
function partitionByCredential(
  store: CacheStore,
  credentialKey: ResponseCacheOptions['credentialKey'],
  answers: AnswerStore,
): CacheStore {
  const partition = (key: CacheKey) => credentialKey(key.headers ?? {});
  const privateKey = (key: CacheKey): CacheKey => ({ ...key, path: `${key.path}#${partition(key)}` });
  const answerKey = (key: CacheKey) => `${key.origin}${key.path}#${partition(key)}`;
  return {
    async get(key) {
      const result = await store.get(privateKey(key));
      const bytes = result && byteLength(result.body);
      if (result && bytes !== undefined) answers.fresh(answerKey(key), result, bytes);
      return result;
    },
    createWriteStream: (key, value) => store.createWriteStream(privateKey(key), value),
    delete(key) {
      answers.forget(answerKey(key));
      return store.delete(privateKey(key));
    },
  };
}

// The stores return a Buffer or a list of chunks; a stream's size is unknown, so it is not kept.
function byteLength(body: GetResult['body']): number | undefined {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Buffer.byteLength(body);
  if (!Array.isArray(body)) return undefined;
  return body.reduce<number>((sum, chunk: Buffer | string) => sum + Buffer.byteLength(chunk), 0);
}
