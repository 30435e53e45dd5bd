import type { ExecutionResult } from 'graphql';
import type { ServerResponse } from 'node:http';
import { isAsyncIterable, type GraphQLParams, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { UpstreamCredentials } from '../pim/credential.ts';
import { ALL } from '../pim/cache/invalidations.ts';
import { alsoEnded } from '../pim/cache/tags.ts';
import type { PimApi } from '../pim/loaders.ts';
import { directivesOf, freshnessAt, seconds, type Expiry } from '../pim/rest/freshness.ts';
import type { ByteAccount } from '../pim/rest/byte-limits.ts';
import { cacheControlFor, cacheHeaders, sendsCredential, tagFormat } from './http-caching.ts';
import { errorsOf } from './operation.ts';
import { batchMarks } from './request-slot.ts';

export interface ResponseCacheOptions {
  /** Bound on the entries: keys, serialized results, tags and headers, counted as two bytes a character. */
  maxBytes: number;
  /** Lower-case incoming headers passed on to the PIM (a request with one gets a private Cache-Control). */
  forwardHeaders: readonly string[];
  /** Builds a request's upstream credential headers. */
  credentials: UpstreamCredentials;
  /** The client's credential partition of those headers: entries are partitioned as the upstream cache's are. */
  partition: (headers: Readonly<Record<string, string>>) => string;
  /** The tag header (useHttpCaching's): a hit carries it as its own Cache-Control allows, whatever the filler's did. */
  surrogateKeyHeader: string;
  /** The request's upstream bytes (the context factory's): a hit's text counts there as executing it would. */
  bytes: (served: { request: Request; res?: ServerResponse }) => ByteAccount;
  /** GRAPHQL_BATCHING: a batch's operations are executed, never answered from or stored in the cache. */
  batching: boolean;
}

/** Serialized results of repeated operations, and the hook that drops them when the catalog changes. */
export interface ResponseCache {
  plugin: Plugin;
  /**
   * Drops every entry that read `tag` (`catalog:<id>` or `classification:<id>`, the id percent-encoded,
   * as PimApi.tags() spells them; a classification's also drops those tagged `classification:`, tags.ts), or every
   * entry for `all`; returns how many were dropped. The app drops all on any invalidation; this is the finer hook.
   */
  invalidate(tag: string): number;
  /** Entries held, what they take (counted as `maxBytes` is), and requests answered from them so far. */
  stats(): { entries: number; bytes: number; hits: number };
}

interface Entry {
  /** The result exactly as it was sent, and its UTF-8 bytes. */
  text: string;
  size: number;
  /** The response headers the result set besides Cache-Control, which is worked out again per hit. */
  headers: Record<string, string>;
  /** When the least fresh upstream answer behind it stops being fresh: a hit claims what is left then. */
  expiry: Expiry;
  /** When its execution began (epoch ms): a client's `max-age` bounds its age, a 401 heard since ends it. */
  storedAt: number;
  tags: readonly string[];
}

const KEY = Symbol('response cache key');
const HIT = Symbol('response cache hit');
const SENT = Symbol('response headers of a result to store');
const FOUND = Symbol('response cache generation of a hit');
/** What this plugin keeps on the request's context, and on the results it serves or stores. */
type Marks = { [KEY]?: string; [HIT]?: Entry; [FOUND]?: number; pim?: PimApi };
/** A result to store once sent: its response headers, given before it is serialized, and the store of its text. */
type Sent = { headers?: Record<string, string>; store: (text: string, out: ExecutionResult) => void };
type Result = ExecutionResult & { [HIT]?: Entry; [SENT]?: Sent };

// What a client's own Cache-Control lets it be answered with (RFC 9111 §5.2.1): no stored result for `no-cache` or
// `no-store` (a reload; fetch adds `no-cache` to every conditional request), else one no older than its `max-age` and
// fresh at least its `min-fresh` longer. Without Cache-Control, `Pragma: no-cache` (HTTP/1.0 clients and proxies) asks
// what `no-cache` does (§5.4).
const accepts = (headers: Headers, entry: Entry, now: number) => {
  const cacheControl = headers.get('cache-control');
  if (cacheControl === null) {
    const pragma = headers.get('pragma');
    return pragma === null || !directivesOf(pragma).has('no-cache');
  }
  const directives = directivesOf(cacheControl);
  if (directives.has('no-cache') || directives.has('no-store')) return false;
  const maxAge = seconds(directives.get('max-age'));
  if (maxAge !== undefined && now - entry.storedAt >= maxAge * 1_000) return false;
  const minFresh = seconds(directives.get('min-fresh'));
  // To the millisecond: freshnessAt's whole seconds round up, and 9.4 s left is not the 10 s min-fresh=10 asks for.
  return minFresh === undefined || entry.expiry.maxUntil - now >= minFresh * 1_000;
};
// Entries end two seconds before their answers' freshness says: the lifetimes the upstream step reports
// are whole seconds, off by up to 1.5 s (a rounded `Age`, then whole seconds taken off a kept answer); the entry's own
// lifetime is counted to the millisecond from them.
const marginS = 2;

// What an entry holds, two bytes a character: its key and text, and beside them the tags it read (percent-encoded ids,
// up to nine characters each of an id's) and its response headers, which name them again (Surrogate-Key).
const weight = (key: string, { text, tags, headers }: Entry) => {
  let chars = key.length + text.length;
  for (const tag of tags) chars += tag.length;
  for (const name in headers) chars += name.length + headers[name]!.length;
  return 2 * chars + 256;
};

// JSON.parse reads 1e400 as Infinity, which JSON.stringify writes as null: variables holding one get no key.
const finiteOnly = (_key: string, value: unknown) => {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('not a JSON number');
  return value;
};

/**
 * A cache of whole serialized results, keyed by document, variables, operation name and the
 * credential partition. A hit skips validation, the context, execution and serialization, but still
 * goes through every onExecute hook (request log, metrics, spans) and every response hook
 * (ETag and 304, CORS, Vary, request id); its Cache-Control is what its answers have left. An
 * entry lives only while every upstream answer it used is fresh; results with errors, stale
 * data or no upstream freshness, and streamed (`@defer`/`@stream`) ones, are never stored.
 */
export function createResponseCache({
  maxBytes,
  forwardHeaders,
  credentials,
  partition,
  surrogateKeyHeader,
  bytes,
  batching,
}: ResponseCacheOptions): ResponseCache {
  // The limits of a request (upstream calls, representations, bytes) hold for a whole batch, its operations
  // together: a hit skips what counts them, so a batch is executed in full, as each operation alone may not be.
  const batches = batching ? batchMarks() : undefined;
  const format = tagFormat(surrogateKeyHeader);
  // Undefined for variables JSON.stringify cannot write (nested deeper than its stack, which JSON.parse is not).
  const keyOf = (params: GraphQLParams, credential: string) => {
    // Anything else (an array nested thousands deep would overflow join's toString) is Yoga's to refuse.
    const { query, operationName } = params as { query: unknown; operationName: unknown };
    if (typeof query !== 'string' || (operationName != null && typeof operationName !== 'string')) return undefined;
    let variables: string;
    try {
      variables = JSON.stringify(params.variables ?? null);
      // Only a `null` may have been an Infinity: the walk that tells is paid by those variables alone.
      if (variables.includes('null')) JSON.stringify(params.variables, finiteOnly);
    } catch {
      return undefined;
    }
    // The one-way key the upstream cache uses: everything forwarded, so no credential sees another's entry.
    return [credential, operationName ?? '', variables, query].join('\n');
  };
  // One result takes at most a sixteenth: a single request (aliases of one large page) cannot empty the cache.
  const entries = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    maxEntrySize: Math.max(1, Math.floor(maxBytes / 16)),
  });
  // Bumped by every invalidation: a result executed before one may hold data it ended.
  let generation = 0;
  let hits = 0;
  let yoga: YogaServerInstance<object, object>;
  const plugin: Plugin = {
    onYogaInit: (init) => void (yoga = init.yoga as typeof yoga),
    ...(batches && { onRequestParse: batches.onRequestParse }),
    onParams({ params, request, context, setParamsHandler }) {
      if (params.query === undefined || batches?.isBatch(request)) return;
      const marks = context as Marks;
      const sent = credentials.headers(request.headers);
      const of = partition(sent);
      const key = (marks[KEY] = keyOf(params, of));
      const entry = key === undefined ? undefined : entries.get(key);
      if (!entry || !accepts(request.headers, entry, Date.now())) return;
      // Stored before the PIM refused the key: executed, it gets the PIM's refusal.
      if (entry.storedAt <= credentials.refusedSince(sent)) return;
      // An invalidation before the hit goes out (it may wait, for an APQ registration in Redis) ends what it claims.
      const found = generation;
      // Sent, the text weighs what executing it would: past the request's (or its credential's, or the process's) bytes it is a miss,
      // which executes and fails UPSTREAM_TOO_LARGE where it should. The account lasts until the response is out.
      try {
        bytes({ request, res: (context as { res?: ServerResponse }).res }).send(entry.size);
      } catch {
        return;
      }
      // Yoga's own handler without validation and context: the execute hooks run, then onExecute answers.
      // The document comes from Yoga's parser cache (an entry holding it would keep 70 bytes a character).
      setParamsHandler(() => {
        const contextValue = Object.assign(context, { request, params, [HIT]: entry, [FOUND]: found });
        const { schema, parse, execute } = yoga.getEnveloped(contextValue);
        const { variables: variableValues, operationName } = params;
        return execute({ schema, document: parse(params.query!), contextValue, variableValues, operationName });
      });
    },
    onExecute({ args, setResultAndStopExecution }) {
      const { request, pim, [KEY]: key, [HIT]: entry } = args.contextValue as Marks & { request: Request };
      if (entry)
        return (void hits++, setResultAndStopExecution({ [HIT]: entry, stringify: () => entry.text } as Result));
      const started = generation;
      // An entry counts from when its execution began: a 401 heard while its calls were out (an answer the PIM
      // accepted before revoking the key, that came back after) ends it as one heard after it was stored.
      const startedAt = Date.now();
      return {
        onExecuteDone({ result, setResult }) {
          const expiry = pim?.expiry();
          // To the millisecond: freshnessAt's whole seconds round up, a second more than is left, which with the
          // answers' own rounding outlasted the margin (test/performance/response-cache-rounding.test.ts).
          const ttl = expiry ? expiry.maxUntil - Date.now() - marginS * 1_000 : 0;
          if (!pim || !expiry || key === undefined || isAsyncIterable(result)) return;
          if (ttl <= 0 || result.errors?.length || result.data == null) return;
          const cacheControl = request.headers.get('cache-control');
          if (cacheControl !== null && directivesOf(cacheControl).has('no-store')) return;
          const tags = [...pim.tags()];
          const store = (text: string, out: ExecutionResult) => {
            // What is sent is checked, not what was executed: a later hook may have marked it stale.
            if (sent.headers && !out.errors?.length && !out.extensions?.['stale'] && generation === started) {
              const entry = {
                text,
                size: Buffer.byteLength(text),
                headers: sent.headers,
                expiry,
                storedAt: startedAt,
                tags,
              };
              entries.set(key, entry, { ttl, size: weight(key, entry) });
            }
          };
          const sent: Sent = { store };
          setResult({ ...result, [SENT]: sent } as Result);
        },
      };
    },
    // After the request's byte count (context.ts), which wraps the serialization first: a text it refused
    // (UPSTREAM_TOO_LARGE sent in its place, which errorsOf then gives) is not stored.
    onResultProcess({ result }) {
      const sent = (result as Result)[SENT];
      if (!sent) return;
      const serialized = result as Result & { stringify?: (out: ExecutionResult) => string };
      const inner = serialized.stringify ?? JSON.stringify;
      serialized.stringify = (out) => {
        const text = inner(out);
        if (errorsOf(serialized).length === 0) sent.store(text, out);
        return text;
      };
    },
    // Runs after HTTP caching's hook, which gave the result its Cache-Control.
    onExecutionResult({ request, result, setResult, context }) {
      if (!result || isAsyncIterable(result)) return;
      const http = result.extensions?.['http'] as { headers?: Record<string, string> } | undefined;
      const { 'cache-control': _, ...headers } = http?.headers ?? {};
      const { [SENT]: sent, [HIT]: entry } = result as Result;
      if (sent) sent.headers = headers;
      if (!entry) return;
      const credential = sendsCredential(forwardHeaders, request.headers);
      // As a miss's answers read before an invalidation that came while it ran (loaders.ts), a purged hit is not fresh.
      const purged = (context as Marks)[FOUND] !== generation;
      const policy = cacheControlFor({
        method: request.method,
        credential,
        freshness: purged ? undefined : freshnessAt(entry.expiry),
        failed: false,
      });
      const { cacheControl, keys } = cacheHeaders(policy, credential, () => entry.tags, format);
      const { [surrogateKeyHeader]: _filler, ...stored } = entry.headers;
      const all: Record<string, string> = { ...headers, ...stored, 'cache-control': cacheControl };
      if (keys) all[surrogateKeyHeader] = keys;
      setResult({ ...result, extensions: { ...result.extensions, http: { ...http, headers: all } } });
    },
  };
  return {
    plugin,
    invalidate(tag) {
      generation++;
      const before = entries.size;
      if (tag === ALL) entries.clear();
      else {
        const wider = alsoEnded(tag) ?? tag;
        for (const key of [...entries.keys()]) {
          const tags = entries.peek(key)?.tags;
          if (tags?.includes(tag) || tags?.includes(wider)) entries.delete(key);
        }
      }
      return before - entries.size;
    },
    stats: () => ({ entries: entries.size, bytes: entries.calculatedSize, hits }),
  };
}
