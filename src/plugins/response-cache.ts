import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { createCredentialKey, type UpstreamCredentials } from '../pim/credential.ts';
import type { PimApi } from '../pim/loaders.ts';
import type { Freshness } from '../pim/types.ts';
import { cacheControlFor, sendsCredential } from './http-caching.ts';

export interface ResponseCacheOptions {
  /** Bound on the entries: keys and serialized results, counted as two bytes a character. */
  maxBytes: number;
  /** Lower-case incoming headers passed on to the PIM (a request with one gets a private Cache-Control). */
  forwardHeaders: readonly string[];
  /** Builds a request's upstream credential headers; entries are partitioned as the upstream cache's are. */
  credentials: UpstreamCredentials;
}

/** Serialized results of repeated operations, and the hook that drops them when the catalog changes. */
export interface ResponseCache {
  plugin: Plugin;
  /**
   * Drops every entry that read `tag` (`catalog:<id>` or `classification:<id>`, the id percent-encoded,
   * as PimApi.tags() spells them), or every entry for `all`; returns how many were dropped.
   */
  invalidate(tag: string): number;
  /** Entries held, what they take (counted as `maxBytes` is), and requests answered from them so far. */
  stats(): { entries: number; bytes: number; hits: number };
}

interface Entry {
  /** The result exactly as it was sent. */
  text: string;
  /** The response headers the result set besides Cache-Control, which is worked out again per hit. */
  headers: Record<string, string>;
  /** The least freshness of the upstream answers behind it, at `at` (epoch ms). */
  freshness: Freshness;
  at: number;
  tags: readonly string[];
}

type Headers_ = Record<string, string>;
type Result = ExecutionResult & { stringify?: (result: ExecutionResult) => string };
const HIT = Symbol('response cache hit');
const PENDING = Symbol('response cache entry to be stored');
type Marked = Result & { [HIT]?: Entry; [PENDING]?: Pending };
interface Pending {
  headers?: Headers_;
}

// A client asking past caches (a reload, `no-cache`) gets a result executed afresh.
const asksPastCache = (headers: Headers) =>
  /\b(no-cache|no-store|max-age=0)\b/i.test(headers.get('cache-control') ?? '');
// Entries end a second before their answers' freshness does: `Age` is rounded to whole seconds.
const marginS = 1;

/**
 * A cache of whole serialized results, keyed by document, variables, operation name and the
 * credential partition, so a repeated operation skips execution and serialization. An entry
 * lives only while every upstream answer it used is fresh; results with errors, stale data or
 * no upstream freshness, and streamed (`@defer`/`@stream`) results are never stored. A hit goes
 * through every other hook (request log, metrics, spans, ETag, CORS), and its Cache-Control
 * is what the entry's answers have left.
 */
export function createResponseCache({ maxBytes, forwardHeaders, credentials }: ResponseCacheOptions): ResponseCache {
  // The one-way key the upstream cache uses: everything forwarded, so no credential sees another's entry.
  const credentialKey = createCredentialKey(credentials.names);
  const partition = (headers: Headers) => credentialKey(credentials.headers(headers));
  const entries = new LRUCache<string, Entry>({ maxSize: maxBytes });
  // Bumped by every invalidation: a result executed before one may hold data it ended.
  let generation = 0;
  let hits = 0;
  const store = (key: string, entry: Entry, ttl: number) =>
    entries.set(key, entry, { ttl, size: 2 * (key.length + entry.text.length) });
  const plugin: Plugin = {
    onExecute({ args, setResultAndStopExecution }) {
      const { request, params, pim } = args.contextValue as { request: Request; params: { query?: string } } & {
        pim?: PimApi;
      };
      if (!pim || params.query === undefined) return;
      const key = [
        partition(request.headers),
        args.operationName ?? '',
        JSON.stringify(args.variableValues ?? null),
        params.query,
      ].join('\n');
      const entry = asksPastCache(request.headers) ? undefined : entries.get(key);
      if (entry)
        return (void hits++, setResultAndStopExecution({ [HIT]: entry, stringify: () => entry.text } as Marked));
      const started = generation;
      return {
        onExecuteDone({ result, setResult }) {
          const freshness = pim.freshness();
          const ttl = ((freshness?.maxAgeS ?? 0) - marginS) * 1_000;
          if (isAsyncIterable(result) || result.errors?.length || result.data == null || !freshness || ttl <= 0) return;
          if (/\bno-store\b/i.test(request.headers.get('cache-control') ?? '')) return;
          const tags = [...pim.tags()];
          const pending: Pending = {};
          const stringify = (sent: ExecutionResult) => {
            const text = JSON.stringify(sent);
            // What is sent is checked, not what was executed: a later hook may have marked it stale.
            const clean = !sent.errors?.length && !sent.extensions?.['stale'];
            if (clean && pending.headers && generation === started)
              store(key, { text, headers: pending.headers, freshness, at: Date.now(), tags }, ttl);
            return text;
          };
          setResult({ ...result, [PENDING]: pending, stringify } as Marked);
        },
      };
    },
    // Runs after HTTP caching's hook, which gave the result its Cache-Control.
    onExecutionResult({ request, result, setResult }) {
      if (!result || isAsyncIterable(result)) return;
      const marked = result as Marked;
      const http = result.extensions?.['http'] as { headers?: Headers_ } | undefined;
      const { 'cache-control': _, ...headers } = http?.headers ?? {};
      const pending = marked[PENDING];
      if (pending) pending.headers = headers;
      const entry = marked[HIT];
      if (!entry) return;
      const cacheControl = cacheControlFor({
        method: request.method,
        credential: sendsCredential(forwardHeaders, request.headers),
        freshness: aged(entry.freshness, Date.now() - entry.at),
        failed: false,
      });
      const extensions = {
        ...result.extensions,
        http: { ...http, headers: { ...headers, ...entry.headers, 'cache-control': cacheControl } },
      };
      setResult({ ...marked, extensions } as Marked);
    },
  };
  return {
    plugin,
    invalidate(tag) {
      generation++;
      const before = entries.size;
      if (tag === 'all') entries.clear();
      else for (const key of [...entries.keys()]) if (entries.peek(key)?.tags.includes(tag)) entries.delete(key);
      return before - entries.size;
    },
    stats: () => ({ entries: entries.size, bytes: entries.calculatedSize, hits }),
  };
}

// Takes the whole seconds elapsed since the entry was stored off both lifetimes.
function aged({ maxAgeS, sharedMaxAgeS, shared }: Freshness, elapsedMs: number): Freshness {
  const elapsedS = Math.floor(elapsedMs / 1000);
  return { maxAgeS: Math.max(0, maxAgeS - elapsedS), sharedMaxAgeS: Math.max(0, sharedMaxAgeS - elapsedS), shared };
}
