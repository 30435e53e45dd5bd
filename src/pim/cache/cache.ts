import { Writable } from 'node:stream';
import { cacheStores, interceptors, type Dispatcher } from 'undici';
import { closeRedis, createRedis } from '../../redis.ts';
import { createAnswerStore, type AnswerStore } from './answer-store.ts';
import type { CacheKey, CacheStore, CacheValue, GetResult } from './cache-store.ts';
import { isErrorEnvelopeText } from '../rest/answer.ts';
import type { Answer } from '../rest/types.ts';
import { createRedisCacheStore } from './redis-cache-store.ts';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

export interface HttpCacheOptions {
  /**
   * Maps request headers to their credential partition. Only the HTTP cache's store calls it: undici
   * hands that store its own copy of a call's headers, never the call, so it keys once per lookup.
   */
  credentialKey: (headers: Headers) => string;
  /** The names of the headers `credentialKey` reads (lower case). */
  credentialHeaders: readonly string[];
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
  /** Bound on the responses stored in Redis, shared by the fleet. */
  redisMaxBytes: number;
  /** Longest wait for one Redis reply; a lookup that takes longer is a miss, a write is skipped. */
  redisTimeoutMs: number;
  /** How long a request whose Redis lookup of a URL failed finds that URL a miss at once (a request's budget). */
  missAfterFailureMs: number;
  /** Told about each Redis failure; the call then goes on as a cache miss. */
  onError: (error: Error) => void;
  /** Epoch ms of the latest invalidation of a request path: responses stored before it are misses. */
  invalidatedSince: (path: string) => number;
  /** Epoch ms the PIM last refused the key of a call's headers (UpstreamCredentials.refusedSince): older entries miss. */
  refusedSince?: ((headers: Headers) => number) | undefined;
}

/**
 * The undici interceptor to compose on the upstream Agent, the fast path for fresh answers
 * already parsed, and the store's clean-up. The answer-lookup step calls `lookup(path, partition,
 * headers)` before a call and answers with its result when defined; after the call it calls
 * `remember(path, partition, headers, answer)`. `path` is the request path after the base URL, as
 * sent; `partition` is the call's credential partition.
 */
export interface HttpCache {
  interceptor: Dispatcher.DispatcherComposeInterceptor;
  /** A fresh cached answer, its body parsed (frozen, shared by callers), or undefined. */
  lookup(path: string, partition: string, headers: Headers): Answer | undefined;
  /** Keeps a parsed answer for later lookups while the HTTP cache holds its response fresh. */
  remember(path: string, partition: string, headers: Headers, answer: Answer): void;
  /** Drops the parsed answers after an invalidation; the HTTP cache checks its own entries on lookup. */
  forgetAnswers(): void;
  /** Drops the stored response (and parsed answer) of `path` for the credential in `headers`: one found unreadable. */
  drop(path: string, headers: Readonly<Record<string, string>>): Promise<void>;
  close(): Promise<void>;
}

// What one entry of the in-memory store holds besides its body (its key, the request's and the answer's headers):
// some 2.4 KB measured for a short URL and four headers, counted with a margin.
const ENTRY_BOOKKEEPING_BYTES = 3_072;

/**
 * Creates the HTTP cache for upstream GETs: undici's cache interceptor, which follows the
 * upstream's Cache-Control, Age and ETag (revalidating with If-None-Match) and never stores
 * `no-store`, over a store partitioned per credential so one caller never sees another's answer.
 */
export function createHttpCache(options: HttpCacheOptions): HttpCache {
  const { credentialKey, defaultTtlMs, redisUrl, maxBytes, maxEntryBytes, onError } = options;
  const redis = redisUrl ? createRedis(redisUrl, onError, options.redisTimeoutMs) : undefined;
  // undici's own count bound (1,024 by default, whatever the bytes) emptied the cache to 512 entries at the 1,025th:
  // 64 MiB held a thousand small answers. Bounded by the bytes instead, which hold the bookkeeping too: maxSize counts
  // the bodies alone, so a quarter of the bound goes to the entries' keys and headers (one entry per 12 KiB of it) and
  // the rest to the bodies. One entry per 4 KiB beside the whole bound for bodies held 1.6 times the bound (8 MiB of
  // 4 KB answers took 12.5 MiB of heap).
  const maxCount = Math.max(1, Math.floor(maxBytes / 4 / ENTRY_BOOKKEEPING_BYTES));
  const maxSize = maxBytes - maxCount * ENTRY_BOOKKEEPING_BYTES;
  const inner = redis
    ? createRedisCacheStore({
        redis,
        // A quarter of the bound, as in memory below: one answer never pushes out more than a quarter of the others.
        maxEntryBytes: Math.min(maxEntryBytes, Math.floor(options.redisMaxBytes / 4)),
        maxBytes: options.redisMaxBytes,
        replyTimeoutMs: options.redisTimeoutMs,
        missAfterFailureMs: options.missAfterFailureMs,
        onError,
      })
    : new cacheStores.MemoryCacheStore({
        maxCount,
        maxSize,
        // No larger than a quarter of the bodies' part: undici, written an entry past maxSize, evicts the oldest down
        // to half of maxSize, the one just written counted and kept; one larger than half emptied the cache of every
        // other answer (one past maxSize was then dropped too). A quarter leaves the others at least a quarter.
        maxEntrySize: Math.min(maxEntryBytes, Math.floor(maxSize / 4)),
      });
  const answers = createAnswerStore({ maxBytes });
  // When each call that looked its key up went out: an answer to a call sent before an invalidation of its path is
  // not stored, though it arrives after. undici hands one call's lookup and the write of its answer (and the
  // lookup again after a 304) the same key object, so the mark is the call's own and goes with it.
  const sentAt = new WeakMap<CacheKey, number>();
  const refusedSince = options.refusedSince ?? (() => 0);
  const keys = { partition: credentialKey, names: new Set(options.credentialHeaders), refusedSince };
  const store = partitionByCredential(inner, keys, answers, options.invalidatedSince, sentAt);
  const interceptor = interceptors.cache({
    store,
    methods: ['GET'],
    // Every entry is private to one credential, so the rules of a private cache apply.
    type: 'private',
    ...(defaultTtlMs > 0 ? { cacheByDefault: defaultTtlMs } : {}),
  });
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const prefix = `${base.origin}${basePath}`;
  // The same key the store below builds from undici's copy of the headers.
  const answerKey = (path: string, partition: string) => `${prefix}${path}#${partition}`;
  return {
    interceptor,
    lookup: (path, partition, headers) => answers.lookup(answerKey(path, partition), headers, refusedSince(headers)),
    remember: (path, partition, headers, answer) => answers.remember(answerKey(path, partition), headers, answer),
    forgetAnswers: () => answers.clear(),
    drop: async (path, headers) =>
      void (await store.delete({ origin: base.origin, method: 'GET', path: `${basePath}${path}`, headers })),
    close: async () => void (redis && (await closeRedis(redis))),
  };
}

// Puts the credential key in the stored path; the store never sees the raw credential. Fresh
// hits open an entry in `answers`, which the client then fills with the parsed body. An entry
// stored before an invalidation of its tags is a miss; the next answer overwrites it.
function partitionByCredential(
  store: CacheStore,
  credentials: {
    partition: HttpCacheOptions['credentialKey'];
    names: ReadonlySet<string>;
    refusedSince: (headers: Headers) => number;
  },
  answers: AnswerStore,
  invalidatedSince: HttpCacheOptions['invalidatedSince'],
  sentAt: WeakMap<CacheKey, number>,
): CacheStore {
  const partition = (key: CacheKey) => credentials.partition(key.headers ?? {});
  const privateKey = (key: CacheKey, of = partition(key)): CacheKey => ({ ...key, path: `${key.path}#${of}` });
  const answerKey = (key: CacheKey, of = partition(key)) => `${key.origin}${key.path}#${of}`;
  const found = (key: CacheKey, of: string, stored: GetResult | undefined) => {
    // Stored before an invalidation of its path, or before the PIM refused its key: the PIM would not answer it so.
    if (!stored || stored.cachedAt <= Math.max(invalidatedSince(key.path), credentials.refusedSince(key.headers ?? {})))
      return undefined;
    const result = withoutStaleDirectives(stored);
    const bytes = byteLength(result.body);
    if (bytes !== undefined) answers.fresh(answerKey(key, of), result, bytes);
    return result;
  };
  return {
    // Synchronous over the in-memory store: undici then goes on without a promise for each call.
    get(key) {
      if (!sentAt.has(key)) sentAt.set(key, Date.now());
      const of = partition(key);
      const stored = store.get(privateKey(key, of));
      return stored instanceof Promise ? stored.then((value) => found(key, of, value)) : found(key, of, stored);
    },
    // A failure the upstream says may be kept (a maintenance page's `max-age`, a redirect, never followed
    // here) is not: replayed, it would outlast the outage and count as a fault of an upstream never called.
    createWriteStream(key, value) {
      const of = partition(key);
      const sent = sentAt.get(key);
      if (!kept(value) || (sent !== undefined && invalidatedSince(key.path) >= sent)) return undefined;
      // Stored as of when its call went out, not when it came back: an invalidation this instance learns of later
      // (another instance's, read once a second) that came while the call was out then ends it here and in Redis.
      const asOfSending = sent !== undefined && sent < value.cachedAt ? { ...value, cachedAt: sent } : value;
      const open = () =>
        store.createWriteStream(...withoutCredentials(privateKey(key, of), asOfSending, credentials.names));
      return value.statusCode === 404 ? keptIfEnvelope(open) : open();
    },
    delete(key) {
      answers.forget(answerKey(key));
      return store.delete(privateKey(key));
    },
  };
}

/**
 * The key and value as stored: undici's memory store keeps the key's headers in each entry, and the Vary values
 * besides. A credential's are the partition's, in the path already: kept, a caller's made-up keys of 14 KB held 1.2
 * times the bound (HTTP_MAX_HEADER_BYTES lets them be far longer). Only the other Vary headers go with the entry, to
 * tell its variants apart; a lookup still brings all its headers, which match those.
 */
function withoutCredentials(key: CacheKey, value: CacheValue, names: ReadonlySet<string>): [CacheKey, CacheValue] {
  const varied = Object.keys(value.vary ?? {}).filter((name) => !names.has(name));
  const pick = (from: Readonly<Record<string, unknown>> | undefined) =>
    Object.fromEntries(varied.map((name) => [name, from?.[name] ?? null]));
  const vary = value.vary && (pick(value.vary) as NonNullable<CacheValue['vary']>);
  return [
    { ...key, headers: pick(key.headers) as CacheKey['headers'] },
    { ...value, vary },
  ];
}

// Answers (2xx) and the client errors that stay true (404, 410), not 429, which is about the moment.
const kept = ({ statusCode: status }: CacheValue) =>
  (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429);

// The PIM's 404 is a small envelope; a bigger body is no verdict worth keeping.
const MAX_KEPT_404_BYTES = 16_384;

/**
 * A 404 is kept only once its body shows it is the PIM's (its error envelope, rest/errors.ts): a proxy's page, labelled
 * JSON or not, is an outage, which replayed would outlast it without the PIM being asked. Held until its end, then
 * written to the store, or dropped.
 */
function keptIfEnvelope(open: () => Writable | undefined): Writable {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size <= MAX_KEPT_404_BYTES) chunks.push(chunk);
      done();
    },
    final(done) {
      const body = Buffer.concat(chunks);
      const store = size <= MAX_KEPT_404_BYTES && isErrorEnvelopeText(body.toString('utf8')) ? open() : undefined;
      if (!store) return done();
      store.once('error', done);
      store.end(body, () => done());
    },
  });
}

// The client's stale step serves stale answers, one refresh per key and with the call's own
// queue and breaker; undici would serve them too, from inside the call, refreshing on every use.
function withoutStaleDirectives(result: GetResult): GetResult {
  const directives = result.cacheControlDirectives;
  if (!directives?.['stale-while-revalidate'] && !directives?.['stale-if-error']) return result;
  const { 'stale-while-revalidate': _swr, 'stale-if-error': _sie, ...rest } = directives;
  return { ...result, cacheControlDirectives: rest };
}

// The stores return a Buffer or a list of chunks; a stream's size is unknown, so it is not kept.
function byteLength(body: GetResult['body']): number | undefined {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Buffer.byteLength(body);
  if (!Array.isArray(body)) return undefined;
  return body.reduce<number>((sum, chunk: Buffer | string) => sum + Buffer.byteLength(chunk), 0);
}
