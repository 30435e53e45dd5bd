import { Writable } from 'node:stream';
import { cacheStores, interceptors, type Dispatcher } from 'undici';
import { closeRedis, createRedis } from '../../redis.ts';
import { createAnswerStore, type AnswerStore } from './answer-store.ts';
import type { CacheKey, CacheStore, CacheValue, GetResult } from './cache-store.ts';
import { isEnvelopeText } from '../rest/answer.ts';
import type { Answer } from '../rest/types.ts';
import { createRedisCacheStore } from './redis-cache-store.ts';

type Headers = Readonly<Record<string, string | string[] | undefined>>;
/** A response's header fields, as undici hands them to a dispatch handler. */
type IncomingHttpHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];

/** What the HTTP cache reads from a call's dispatch options, besides undici's own. */
export interface HttpCacheDispatchOptions {
  /**
   * Set on a call whose stored answer a 304 confirmed: `keep` stores it again (undici's cache dropped it). The caller
   * calls it once it has read the answer: one that cannot be read is dropped instead (steps/send.ts), not kept.
   */
  confirmed?: { keep?: (() => void) | undefined } | undefined;
}

export interface HttpCacheOptions {
  /**
   * Maps request headers to their credential partition. Only the HTTP cache's store calls it: undici
   * hands that store its own copy of a call's headers, never the call, so it keys once per lookup.
   */
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
  /** Epoch ms of the latest invalidation of a request path: responses stored before it are misses. */
  invalidatedSince: (path: string) => number;
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
    ? createRedisCacheStore({ redis, maxEntryBytes, replyTimeoutMs: options.redisTimeoutMs, onError })
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
  const confirmations = createConfirmations(sentAt);
  const store = partitionByCredential(inner, credentialKey, answers, options.invalidatedSince, confirmations);
  const cacheOptions: Parameters<typeof interceptors.cache>[0] = {
    store,
    methods: ['GET'],
    // Every entry is private to one credential, so the rules of a private cache apply.
    type: 'private',
    ...(defaultTtlMs > 0 ? { cacheByDefault: defaultTtlMs } : {}),
  };
  const cache = interceptors.cache(cacheOptions);
  // The same rules, over a dispatch that answers with a stored response a 304 confirmed: they store it afresh.
  confirmations.storeAgain = interceptors.cache(cacheOptions)(replayStored);
  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => cache(confirmations.watch(dispatch));
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const prefix = `${base.origin}${basePath}`;
  // The same key the store below builds from undici's copy of the headers.
  const answerKey = (path: string, partition: string) => `${prefix}${path}#${partition}`;
  return {
    interceptor,
    lookup: (path, partition, headers) => answers.lookup(answerKey(path, partition), headers),
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
  credentialKey: HttpCacheOptions['credentialKey'],
  answers: AnswerStore,
  invalidatedSince: HttpCacheOptions['invalidatedSince'],
  confirmations: Confirmations,
): CacheStore {
  const { sentAt, handedOut } = confirmations;
  const partition = (key: CacheKey) => credentialKey(key.headers ?? {});
  const privateKey = (key: CacheKey, of = partition(key)): CacheKey => ({ ...key, path: `${key.path}#${of}` });
  const answerKey = (key: CacheKey, of = partition(key)) => `${key.origin}${key.path}#${of}`;
  const found = (key: CacheKey, of: string, stored: GetResult | undefined) => {
    if (!stored || stored.cachedAt <= invalidatedSince(key.path)) return undefined;
    const result = withoutStaleDirectives(stored);
    handedOut.set(key, result);
    const bytes = byteLength(result.body);
    if (bytes !== undefined) answers.fresh(answerKey(key, of), result, bytes);
    return result;
  };
  return {
    // Synchronous over the in-memory store: undici then goes on without a promise for each call.
    get(key) {
      // The lookup of an answer a 304 confirmed, being stored again: a miss, so it is written as a whole answer is,
      // as of when its call went out.
      const again = confirmations.storingAgain;
      if (again) return void sentAt.set(key, again.sentAt);
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
      const open = () => store.createWriteStream(privateKey(key, of), asOfSending);
      return value.statusCode === 404 ? keptIfEnvelope(open) : open();
    },
    delete(key) {
      confirmations.dropped(key);
      answers.forget(answerKey(key));
      return store.delete(privateKey(key));
    },
  };
}

// Answers (2xx) and the client errors that stay true (404, 410), not 429, which is about the moment.
const kept = ({ statusCode: status }: CacheValue) =>
  (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429);

// The PIM's 404 is a small envelope; a bigger body is no verdict worth keeping.
const MAX_KEPT_404_BYTES = 16_384;

/**
 * A 404 is kept only once its body shows it is the PIM's (a JSON object, rest/errors.ts): a proxy's page, labelled
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
      const store = size <= MAX_KEPT_404_BYTES && isEnvelopeText(body.toString('utf8')) ? open() : undefined;
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

/**
 * Keeps a stored response a 304 confirms. undici's cache, revalidating a stored response, drops it when the 304
 * carries a Cache-Control (as RFC 9111 §4.1 has a 304 repeat it) rather than update its header fields, and replays it
 * once: the next call went out unconditional and read the whole body again, every other revalidation. Here each 304
 * is watched on its way up; if undici drops the stored response while handling it (synchronously) and does not send
 * the request again (a 304 that cannot confirm it: another ETag, `no-store`), the response is stored again, its
 * header fields updated with the 304's (RFC 9111 §4.3.4), through undici's own rules (`storeAgain`), so its
 * freshness, Vary values and the store wrapper's checks (an invalidation since the call went out) are the same as
 * for a whole answer. (undici issue 5505: once undici freshens a stored response itself, this goes.)
 */
interface Confirmations {
  /** When each call that looked its key up went out (see createHttpCache). */
  sentAt: WeakMap<CacheKey, number>;
  /** The stored response each lookup was handed, by its key object (undici drops it by the same object). */
  handedOut: WeakMap<CacheKey, GetResult>;
  /** Set while a confirmed response is stored again: its lookup is a miss, marked with its call's send time. */
  storingAgain: { sentAt: number } | undefined;
  /** undici's cache interceptor over {@link replayStored}. */
  storeAgain: Dispatcher.Dispatch | undefined;
  /** Wraps the dispatch below undici's cache: sees each 304 it gets, and each request it sends. */
  watch(dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch;
  /** Told of each deletion by undici's cache. */
  dropped(key: CacheKey): void;
}

// A 304 undici's cache is handling, synchronously, inside `watch`.
interface Confirmation {
  headers: IncomingHttpHeaders;
  dropped: CacheKey | undefined;
  refetched: boolean;
}

function createConfirmations(sentAt: WeakMap<CacheKey, number>): Confirmations {
  let confirming: Confirmation | undefined;
  const confirmations: Confirmations = {
    sentAt,
    handedOut: new WeakMap(),
    storingAgain: undefined,
    storeAgain: undefined,
    watch: (dispatch) => (opts, handler) => {
      // undici's cache sends the request again while handling a 304: the stored response was not confirmed.
      if (confirming) confirming.refetched = true;
      const { confirmed } = opts as Dispatcher.DispatchOptions & HttpCacheDispatchOptions;
      return dispatch(opts, new WatchedHandler(handler, (headers, pass) => onConfirmed(headers, pass, confirmed)));
    },
    dropped: (key) => {
      if (confirming && !confirming.dropped) confirming.dropped = key;
    },
  };
  function onConfirmed(
    headers: IncomingHttpHeaders,
    pass: () => void,
    confirmed: HttpCacheDispatchOptions['confirmed'],
  ) {
    const confirmation: Confirmation = { headers, dropped: undefined, refetched: false };
    const outer = confirming;
    confirming = confirmation;
    try {
      pass();
    } finally {
      confirming = outer;
    }
    const key = confirmation.dropped;
    if (!key || confirmation.refetched) return;
    // Once its caller has read it: a stored answer found unreadable is dropped (steps/send.ts), and a write of it
    // still on its way (to Redis) would put it back after the drop.
    if (confirmed) confirmed.keep = () => storeConfirmed(key, headers);
    else storeConfirmed(key, headers);
  }
  function storeConfirmed(key: CacheKey, headers304: IncomingHttpHeaders) {
    const stored = confirmations.handedOut.get(key);
    const body = stored && chunksOf(stored.body);
    if (!stored || !body || !confirmations.storeAgain) return;
    const headers: Record<string, string | string[]> = { ...(stored.headers as Record<string, string | string[]>) };
    for (const [name, value] of Object.entries(headers304)) {
      if (value !== undefined && !NOT_UPDATED_BY_304.has(name)) headers[name] = value;
    }
    // Without a Date of its own the confirmed answer is new (as steps/send.ts serves it), not as old as the first.
    if (headers304.date === undefined) delete headers.date;
    const replay: StoredReplay = { statusCode: stored.statusCode, statusMessage: stored.statusMessage, headers, body };
    const opts = { origin: key.origin, method: 'GET', path: key.path, headers: key.headers ?? {}, replay };
    confirmations.storingAgain = { sentAt: confirmations.sentAt.get(key) ?? Date.now() };
    try {
      confirmations.storeAgain(opts as Dispatcher.DispatchOptions, IGNORED);
    } catch {
      // Nothing stored: the next call reads the whole answer, as before.
    } finally {
      confirmations.storingAgain = undefined;
    }
  }
  return confirmations;
}

// Fields of a 304 that say nothing of the stored representation, or are the connection's (RFC 9111 §3.2).
const NOT_UPDATED_BY_304 = new Set([
  'content-length',
  'content-encoding',
  'content-range',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
]);

interface StoredReplay {
  statusCode: number;
  statusMessage: string;
  headers: Record<string, string | string[]>;
  body: Buffer[];
}

/** A dispatch that answers with the stored response in `opts.replay`, at once, for undici's cache to store. */
const replayStored: Dispatcher.Dispatch = (opts, handler) => {
  const { statusCode, statusMessage, headers, body } = (opts as Dispatcher.DispatchOptions & { replay: StoredReplay })
    .replay;
  let aborted = false;
  const controller: Dispatcher.DispatchController = {
    get aborted() {
      return aborted;
    },
    paused: false,
    reason: null,
    abort: () => void (aborted = true),
    pause: () => undefined,
    resume: () => undefined,
  };
  try {
    handler.onRequestStart?.(controller, {});
    if (!aborted) handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
    for (const chunk of body) if (!aborted) handler.onResponseData?.(controller, chunk);
    if (!aborted) handler.onResponseEnd?.(controller, {});
  } catch (error) {
    handler.onResponseError?.(controller, error as Error);
  }
  return true;
};

const IGNORED: Dispatcher.DispatchHandler = {
  onRequestStart: () => undefined,
  onResponseStart: () => undefined,
  onResponseData: () => undefined,
  onResponseEnd: () => undefined,
  onResponseError: () => undefined,
};

/** Passes every event on; a 304's start goes through `on304`, which passes it on. */
class WatchedHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #on304: (headers: IncomingHttpHeaders, pass: () => void) => void;
  constructor(handler: Dispatcher.DispatchHandler, on304: (headers: IncomingHttpHeaders, pass: () => void) => void) {
    this.#handler = handler;
    this.#on304 = on304;
  }
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown) {
    this.#handler.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>) {
    this.#handler.onRequestUpgrade?.(...args);
  }
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ) {
    const pass = () => this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
    if (statusCode === 304) this.#on304(headers, pass);
    else pass();
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.#handler.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders) {
    this.#handler.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, error: Error) {
    this.#handler.onResponseError?.(controller, error);
  }
  onBodySent(chunk: Buffer) {
    this.#handler.onBodySent?.(chunk);
  }
  onRequestSent() {
    this.#handler.onRequestSent?.();
  }
}

// The body of a stored response as chunks, when the store handed over bytes (a stream cannot be read twice).
function chunksOf(body: GetResult['body']): Buffer[] | undefined {
  if (typeof body === 'string') return [Buffer.from(body)];
  if (Buffer.isBuffer(body)) return [body];
  if (!Array.isArray(body)) return undefined;
  return body.map((chunk: Buffer | string) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
}
