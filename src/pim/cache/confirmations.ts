import type { Dispatcher } from 'undici';
import type { CacheKey, GetResult } from './cache-store.ts';

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

export function createConfirmations(sentAt: WeakMap<CacheKey, number>): Confirmations {
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
export const replayStored: Dispatcher.Dispatch = (opts, handler) => {
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
