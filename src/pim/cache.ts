import { cacheStores, interceptors, type Dispatcher } from 'undici';
import { RedisCacheStore } from 'undici-cache-redis';

type CacheStore = NonNullable<NonNullable<Parameters<typeof interceptors.cache>[0]>['store']>;
type CacheKey = Parameters<CacheStore['get']>[0];

export interface ResponseCacheOptions {
  /** Maps the request headers to a key that differs whenever the caller's credential does. */
  credentialKey: (headers: Record<string, string | string[] | undefined>) => string;
  /** Freshness, in ms, of 2xx answers that carry no caching headers; 0 leaves them uncached. @default 0 */
  defaultTtlMs?: number;
  /** With a `redis://` URL, responses are stored in Redis and shared by every instance using it. */
  redisUrl?: string | undefined;
  /** Bound on the in-process store (and on Redis's client-side copy). @default 64 MiB */
  maxBytes?: number;
  /** Told about Redis failures; the call then goes on as a cache miss. @default ignore */
  onError?: (error: Error) => void;
}

/** The undici interceptor to compose on the upstream Agent, and the store's clean-up. */
export interface ResponseCache {
  interceptor: Dispatcher.DispatcherComposeInterceptor;
  close(): Promise<void>;
}

/**
 * Creates the HTTP cache for upstream GETs: undici's cache interceptor, which follows the
 * upstream's Cache-Control, Age and ETag (revalidating with If-None-Match) and never stores
 * `no-store`, over a store partitioned per credential so one caller never sees another's answer.
 */
export function createResponseCache({
  credentialKey,
  defaultTtlMs = 0,
  redisUrl,
  maxBytes = 64 * 1024 * 1024,
  onError = () => undefined,
}: ResponseCacheOptions): ResponseCache {
  let reportedAt = 0;
  // Redis failing means every lookup fails: one report per 10 s says so without flooding the log.
  const report = (error: Error) => {
    if (Date.now() - reportedAt < 10_000) return;
    reportedAt = Date.now();
    onError(error);
  };
  const redis = redisUrl
    ? new RedisCacheStore({ clientOpts: redisOptions(redisUrl), maxSize: maxBytes, errorCallback: report })
    : undefined;
  const inner: CacheStore = redis ?? new cacheStores.MemoryCacheStore({ maxSize: maxBytes });
  const interceptor = interceptors.cache({
    store: partitionByCredential(inner, credentialKey),
    methods: ['GET'],
    // Every entry is private to one credential, so the rules of a private cache apply.
    type: 'private',
    ...(defaultTtlMs > 0 ? { cacheByDefault: defaultTtlMs } : {}),
  });
  return { interceptor, close: async () => redis?.close() };
}

// Puts the credential key in the stored path; the store never sees the raw credential.
function partitionByCredential(store: CacheStore, credentialKey: ResponseCacheOptions['credentialKey']): CacheStore {
  const privateKey = (key: CacheKey): CacheKey => ({
    ...key,
    path: `${key.path}#${credentialKey(key.headers ?? {})}`,
  });
  return {
    get: (key) => store.get(privateKey(key)),
    createWriteStream: (key, value) => store.createWriteStream(privateKey(key), value),
    delete: (key) => store.delete(privateKey(key)),
  };
}

function redisOptions(url: string) {
  const { hostname, port, username, password, pathname, protocol } = new URL(url);
  return {
    host: hostname,
    port: Number(port || 6379),
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    db: Number(pathname.slice(1) || 0),
    ...(protocol === 'rediss:' ? { tls: {} } : {}),
    keyPrefix: 'pim-graphql:',
    // While Redis is away every lookup fails at once and counts as a miss, instead of queueing
    // behind reconnects until the upstream deadline passes.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (attempt: number) => Math.min(attempt * 250, 5_000),
  };
}
