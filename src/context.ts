import type { ServerResponse } from 'node:http';
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { ByteAccount } from './pim/rest/byte-limits.ts';
import { createPimApi, type PimApi } from './pim/loaders.ts';
import type { PimClient } from './pim/client.ts';
import type { UpstreamCredentials } from './pim/credential.ts';
import type { InputLimits, PimRequest } from './pim/rest/endpoints.ts';
import { requestIdOf } from './observability/plugins/request-log.ts';
import { withErrorContract } from './errors.ts';
import { requestSlot } from './plugins/request-slot.ts';
import { countedWhenSent } from './plugins/sent-bytes.ts';

/** What this server adds to Yoga's context. */
export interface PimContext {
  pim: PimApi;
  /** The request's upstream bytes; released once its response is finished. */
  upstreamBytes: ByteAccount;
  /** Federation entity representations the request may still resolve; `_entities` takes from it. */
  representations: Allowance;
}

/** A count one request may spend up to `limit`. */
export interface Allowance {
  readonly limit: number;
  /** Spends `count` and says true, or spends nothing and says false when that would pass the limit. */
  take(count: number): boolean;
}

// What decides when a request's bytes stop counting; kept beside its context, one per HTTP request. The loaders
// (`pim`) are built by the first operation that executes: a hit of the cache of results needs the bytes alone.
interface RequestState extends Omit<PimContext, 'pim'> {
  pim?: PimApi;
  /** The credential headers of the request's upstream calls, and their queue and byte share. */
  credential: Record<string, string>;
  queueKey: string;
  /** The credential's partition while the PIM has not accepted it: its share inside the unproven keys' one. */
  unproven: string | undefined;
  /** What the request's calls listen to, with `pim`. */
  calls?: AbortController;
  /** Streamed results (@defer/@stream) not yet ended. */
  streams: number;
  /** Yoga has built the response (for a stream, before its later parts exist). */
  responded: boolean;
  /** Served by node:http: the bytes count until the response is out (`close`), however slowly it is read. */
  untilClosed: boolean;
  /** A result was refused as it was serialized (UPSTREAM_TOO_LARGE in place of its text). */
  refused?: boolean;
}

/** Yoga's context, and the node:http response when node:http serves the request (not `yoga.fetch`). */
type ServedContext = YogaInitialContext & { res?: ServerResponse };

/** The request, and the node:http response that serves it when there is one. */
type Served = Pick<ServedContext, 'request' | 'res'>;

/** What every resolver receives. */
export type Context = YogaInitialContext & PimContext;

export interface ContextOptions {
  client: PimClient;
  limits: InputLimits;
  /** Builds the credential headers of a request's upstream calls. */
  credentials: UpstreamCredentials;
  /** Overall deadline of one HTTP request's upstream work. */
  budgetMs: number;
  /** Distinct upstream calls one HTTP request may cause. */
  maxUpstreamCalls: number;
  /** Entity representations one HTTP request may resolve, all its operations together. */
  maxRepresentations: number;
  /** Told about each load answered by the request's DataLoader cache (a deduplicated call). */
  onDedup?: ((request: PimRequest) => void) | undefined;
  /**
   * Lower-case header a trusted proxy sets to the client's address; calls inside one credential are
   * then shared fairly between addresses instead of between requests.
   */
  clientIpHeader?: string | undefined;
}

/**
 * Builds the per-request context factory, and the plugin that ends each request's byte account.
 * The PIM API is cached per HTTP request rather than per operation, so every operation of a
 * batched request shares one set of loaders.
 */
export function createContextFactory({
  client,
  limits,
  credentials,
  budgetMs,
  maxUpstreamCalls,
  maxRepresentations,
  onDedup,
  clientIpHeader,
}: ContextOptions): {
  context: (initial: ServedContext) => PimContext;
  plugin: Plugin;
  /** The request's upstream bytes, without its loaders: what a hit of the cache of results sends counts there. */
  bytes: (served: Served) => ByteAccount;
} {
  const contexts = requestSlot<RequestState>('request state');
  let requests = 0;
  const stateOf = ({ request, res }: Served): RequestState => {
    const known = contexts.get(request);
    if (known) return known;
    // Computed once per request: every call of it queues in the same partition, its bytes count in the same share.
    const credential = credentials.headers(request.headers);
    // In its credential's share of the connections and bytes once the PIM accepted the key; made-up keys (each a
    // partition) share one, as at the door. Each its own, they held the whole process cap with answers they never read,
    // and every connection while the PIM took its time to refuse them: a real caller asking after them waited for all.
    const partition = credentials.partition(credential);
    const queueKey = credentials.shareOf(partition);
    // Inside that one share each made-up (or new) key is a share of its own: a new key's burst holds up the first call
    // of another for one call time at most, as in a credential's partition one request does another's.
    const unproven = queueKey === partition ? undefined : partition;
    const upstreamBytes = client.openByteAccount(queueKey);
    const representations = createAllowance(maxRepresentations);
    const state: RequestState = {
      credential,
      queueKey,
      unproven,
      upstreamBytes,
      representations,
      streams: 0,
      responded: false,
      untilClosed: res !== undefined,
    };
    // An answer its client reads slowly, or not at all, waits in memory until it is out or cut.
    res?.once('close', () => upstreamBytes.release());
    // A client that left before this state was built (while its persisted query was looked up, say):
    // neither `close` nor the abort below will come again, so nothing of it may count.
    if (res?.closed || request.signal.aborted) upstreamBytes.release();
    contexts.set(request, state);
    // Without node:http's `close`, a client that leaves midway ends its account here, and its calls (once it has
    // any) with it; this also covers a stream whose iterator is never closed. At most one listener a request on
    // the adapter's signal, where each costs (below): a hit of the cache of results served by node:http adds none.
    const leave = () => (state.calls?.abort(goneReason(request.signal)), upstreamBytes.release());
    if (!res) request.signal.addEventListener('abort', leave, { once: true });
    return state;
  };
  const context = (initial: ServedContext): PimContext => {
    const { request } = initial;
    const built = stateOf(initial);
    if (!built.pim) {
      const { upstreamBytes, credential, queueKey, unproven } = built;
      // The request id travels upstream so PIM logs can be matched with ours.
      const headers = { ...credential, 'x-request-id': requestIdOf(request) };
      const queue = {
        queueKey,
        queueShare: unproven ?? clientAddress(request.headers, clientIpHeader) ?? `request ${++requests}`,
      };
      // The request's own signal is the server adapter's Proxy, slow for every listener added or removed;
      // the calls of the request (coalescing, queue, undici) listen to a plain one that follows it.
      const calls = (built.calls = new AbortController());
      if (request.signal.aborted) calls.abort(goneReason(request.signal));
      // A client that leaves midway stops its calls (with node:http; else the listener above does).
      else if (initial.res)
        request.signal.addEventListener('abort', () => calls.abort(goneReason(request.signal)), { once: true });
      built.pim = createPimApi({
        client,
        limits,
        headers,
        signal: calls.signal,
        // The budget is a deadline, not a timer: each call gets at most what is left of it.
        deadline: Date.now() + budgetMs,
        bytes: upstreamBytes,
        maxCalls: maxUpstreamCalls,
        onDedup,
        queue,
        // Hashed here once: every step of every call of the request reads it from the call.
        partition: client.partition(headers),
        identity: credentials.identity(credential),
      });
    }
    // Each operation (a batch has several) its own view of the request's loaders, which lists its own stale fields.
    const pim = withErrorContract(built.pim.operation());
    return { pim, upstreamBytes: built.upstreamBytes, representations: built.representations };
  };
  // Once the whole response is built, the parsed bodies behind it are garbage: their bytes stop counting.
  // Served by node:http, the response's own bytes still wait to be written: the account ends at `close`.
  const settle = (state: RequestState | undefined) => {
    if (state?.responded && state.streams === 0 && !state.untilClosed) state.upstreamBytes.release();
  };
  // The same hooks for every operation (the done hook is given its args): no closure per request.
  const executeDone = {
    onExecuteDone: ({ args, result }: { args: { contextValue: { request: Request } }; result: unknown }) => {
      const state = contexts.get(args.contextValue.request);
      if (!state || !isAsyncIterable(result)) return;
      state.streams++;
      // Runs when the last part is out and when the client cancels the stream (the iterator's return).
      return { onEnd: () => (state.streams--, settle(state)) };
    },
  };
  const plugin: Plugin = {
    onExecute: () => executeDone,
    // What the response sends counts as it is serialized: a 63 KB request naming 15 aliases of 3,900 characters had
    // them repeated for 100 entity representations, 5.8 MB held for a client that never read it, counted nowhere.
    onResultProcess: ({ request, result, setResult }) => {
      const state = contexts.get(request);
      if (!state) return;
      const counted = countedWhenSent(result, state.upstreamBytes, () => void (state.refused = true));
      if (counted !== result) setResult(counted);
    },
    onResponse: ({ request, response }) => {
      const state = contexts.get(request);
      // The Cache-Control (and tags) were those of the result the refusal replaced: HTTP caching (the next plugin)
      // gives a response without one its no-store, as any refusal's.
      if (state?.refused) response.headers.delete('cache-control');
      if (state) state.responded = true;
      settle(state);
    },
  };
  return { context, plugin, bytes: (initial) => stateOf(initial).upstreamBytes };
}

/**
 * Why the request's calls stop when its client leaves: the signal's own reason when it is a DOMException (an
 * AbortError, as errors.ts isClientGone expects, or a TimeoutError), else an AbortError. node:http ends the requests
 * pipelined behind the first on a connection that closes with an Error 'aborted' (ECONNRESET) of its own, which
 * errors.ts would mask as unexpected and Yoga log at error level with its stack, once per field.
 */
function goneReason(signal: AbortSignal): unknown {
  const { reason } = signal;
  return reason instanceof DOMException ? reason : new DOMException('The client went away', 'AbortError');
}

// An IPv6 address with its zone fits; a longer one is no address. A proxy's whole entry (RFC 7239 with its
// proto, host and by) is read up to four times that.
const MAX_ADDRESS_LENGTH = 64;
const MAX_ENTRY_LENGTH = 256;

/**
 * The client's address as the nearest trusted proxy saw it: the last entry it wrote into `name`.
 * An entry no address could be (empty or too long) is ignored, so a share's name, held while its
 * calls queue, stays short whatever a misconfigured proxy lets through.
 */
function clientAddress(headers: Headers, name: string | undefined): string | undefined {
  const value = name === undefined ? undefined : headers.get(name);
  const last = value ? split(value, ',').at(-1) : undefined;
  const address = last && last.length <= MAX_ENTRY_LENGTH ? hostOf(last) : undefined;
  return address && address.length <= MAX_ADDRESS_LENGTH ? `address ${address}` : undefined;
}

// A header's list split at `separator` (`,` between entries, `;` between a Forwarded entry's parameters); one inside a
// quoted string (RFC 7239 `host="a,for=b"`, a Host the client chose) splits nothing. One pass: a pattern looking
// ahead from every separator would take quadratic time on a long header.
function split(value: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '"') quoted = !quoted;
    else if (char === '\\' && quoted) i++;
    else if (char === separator && !quoted) (parts.push(value.slice(start, i).trim()), (start = i + 1));
  }
  // A quote left open (a client's own entry, the proxy's added after it) would hide the proxy's entries in it.
  if (quoted) return value.split(separator).map((part) => part.trim());
  parts.push(value.slice(start).trim());
  return parts;
}

// A port as RFC 7239 §6 writes it: digits, or an obfuscated `_name`.
const PORT = String.raw`(?::(?:\d+|_[\w.-]+))?`;
const bracketed = new RegExp(String.raw`^\[([^\]]*)\]${PORT}$`);
const named = new RegExp(String.raw`^(\d{1,3}(?:\.\d{1,3}){3}|_[\w.-]+|unknown)${PORT}$`, 'i');

/**
 * The address alone: a `Forwarded` entry's `for=` node, and of a node its address without the port a proxy may write
 * (RFC 7239 §6 `for="192.0.2.43:47011"`, or `IP:port` in X-Forwarded-For), which would make each of a client's
 * connections a share of its own. A bare IPv6 address (X-Forwarded-For) has colons of its own and stays whole.
 */
function hostOf(entry: string): string {
  const param = split(entry, ';').find((part) => /^for=/i.test(part));
  const node = (param === undefined ? entry : param.slice(4)).trim().replace(/^"|"$/g, '');
  return bracketed.exec(node)?.[1] ?? named.exec(node)?.[1] ?? node;
}

function createAllowance(limit: number): Allowance {
  let spent = 0;
  return { limit, take: (count) => spent + count <= limit && ((spent += count), true) };
}
