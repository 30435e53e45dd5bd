import etag from 'etag';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import vary from 'vary';
import type { PimApi, StaleField } from '../pim/loaders.ts';
import type { Freshness } from '../pim/rest/types.ts';
import { serializedLater } from './operation.ts';

export interface HttpCachingOptions {
  /** Lower-case incoming headers passed on to the PIM: they make a response private and are varied on. */
  forwardHeaders: readonly string[];
  /** Header that names a cacheable response's catalogs and classifications, for CDN purges by tag. */
  surrogateKeyHeader: string;
}

/** What decides one response's `Cache-Control`. */
export interface CachePolicyInput {
  method: string;
  /** The request carried one of the forwarded (credential) headers. */
  credential: boolean;
  /** The least fresh upstream answer behind the result (its `Age` taken off); undefined when none was used. */
  freshness: Freshness | undefined;
  /** The result has errors, or no data: never stored. */
  failed: boolean;
}

/**
 * The `Cache-Control` of one GraphQL result: only complete GET results built from fresh
 * upstream answers may be stored; a caller's own credential keeps them out of shared caches.
 * `max-age` is the least browser lifetime of those answers, `s-maxage` the least shared one.
 */
export function cacheControlFor({ method, credential, freshness, failed }: CachePolicyInput): string {
  const maxAge = Math.floor(freshness?.maxAgeS ?? 0);
  const sharedMaxAge = Math.floor(freshness?.sharedMaxAgeS ?? 0);
  if (method !== 'GET' || failed) return noStore(credential);
  if (credential || !freshness?.shared) return maxAge > 0 ? `private, max-age=${maxAge}` : noStore(credential);
  if (maxAge <= 0 && sharedMaxAge <= 0) return noStore(credential);
  // A browser keeps it as long as the upstream's max-age says; shared caches as long as its s-maxage says.
  return `public, max-age=${maxAge}, s-maxage=${sharedMaxAge}`;
}

function noStore(credential: boolean): string {
  return credential ? 'private, no-store' : 'no-store';
}

// What CDNs take: Fastly a kilobyte a key; proxies' buffers often 8 KB for the whole head, the other headers too.
const MAX_KEY_LENGTH = 1_024;
const MAX_KEYS_LENGTH = 4_096;

/**
 * A response's `Cache-Control` and its tag header's value: the catalogs and classifications behind a
 * response a cache may keep, none on `no-store` (whose tags are then never read: most responses name none).
 * A response whose tags a CDN would refuse or cut (ids may be long) is kept by browsers alone: no purge could
 * reach a shared copy.
 */
export function cacheHeaders(
  cacheControl: string,
  credential: boolean,
  tags: () => Iterable<string> | undefined,
  format: TagFormat = SPACE_SEPARATED,
): { cacheControl: string; keys?: string } {
  if (cacheControl.includes('no-store')) return { cacheControl };
  const read = [...(tags() ?? [])];
  const list = format.spell ? read.map(format.spell) : read;
  const keys = list.join(format.separator);
  if (
    keys.length > MAX_KEYS_LENGTH ||
    list.length > format.maxCount ||
    list.some((tag) => tag.length > format.maxLength)
  ) {
    if (cacheControl.startsWith('private')) return { cacheControl };
    const maxAge = Number(/max-age=(\d+)/.exec(cacheControl)?.[1] ?? 0);
    return { cacheControl: maxAge > 0 ? `private, max-age=${maxAge}` : noStore(credential) };
  }
  return list.length > 0 ? { cacheControl, keys } : { cacheControl };
}

/** How the CDN reading a tag header takes its tags. */
export interface TagFormat {
  /** Between two tags. */
  separator: string;
  /** A tag (`catalog:MASTER`) as written in the header; absent, as it is. */
  spell?: (tag: string) => string;
  /** Longest tag, and most tags in one response, the CDN keeps: past either, no purge could reach the copy. */
  maxLength: number;
  maxCount: number;
}

// Fastly's `Surrogate-Key` and Varnish's `xkey`: separated by spaces.
const SPACE_SEPARATED: TagFormat = {
  separator: ' ',
  maxLength: MAX_KEY_LENGTH,
  maxCount: Infinity,
};

/**
 * How the tags in `header` are written. Cloudflare's `Cache-Tag` and Akamai's `Edge-Cache-Tag` are comma-separated
 * lists whose whitespace the CDN removes (two tags joined by a space became one); Fastly's `Surrogate-Key` and
 * Varnish's `xkey` are separated by spaces. A tag holds neither (its id is percent-encoded). Akamai takes tokens
 * without `:` (a tag holding one is removed from the header, BADCHAR), of 128 characters at most, 128 an object: there
 * `catalog:MASTER` is written `catalog-MASTER`.
 */
export function tagFormat(header: string): TagFormat {
  if (/^cache-tag$/i.test(header)) return { ...SPACE_SEPARATED, separator: ',' };
  if (/^edge-cache-tag$/i.test(header))
    return { separator: ',', spell: (tag) => tag.replace(':', '-'), maxLength: 128, maxCount: 128 };
  return SPACE_SEPARATED;
}

/** The request carries one of the forwarded (credential) headers, which makes its answers private. */
export const sendsCredential = (forwardHeaders: readonly string[], headers: Headers): boolean =>
  forwardHeaders.some((name) => (headers.get(name) ?? '') !== '');

/**
 * HTTP caching of GraphQL responses: a `Cache-Control` derived from the freshness of the REST
 * answers behind each result, `no-store` for everything else, a strong `ETag` on GET bodies
 * (`If-None-Match` gets 304) and `Vary` on `Accept` and the forwarded credential headers, so a
 * shared cache keeps one caller's answer from another.
 */
export function useHttpCaching({ forwardHeaders, surrogateKeyHeader }: HttpCachingOptions): Plugin {
  const carriesCredential = (headers: Headers) => sendsCredential(forwardHeaders, headers);
  const varied = ['Accept', ...forwardHeaders];
  // A response comes with the same Vary every time (none, or CORS's): the last one and its result are kept.
  let lastVary: string | undefined;
  let lastVaried = '';
  const withVaried = (existing: string) => {
    if (existing !== lastVary) [lastVary, lastVaried] = [existing, vary.append(existing, varied)];
    return lastVaried;
  };
  const format = tagFormat(surrogateKeyHeader);
  return {
    // Yoga copies `extensions.http.headers` onto the response and strips them from the body.
    onExecutionResult({ request, result, setResult, context }) {
      if (!result) return;
      // Yoga's hook types know only its own context; this is the one the context factory extended.
      const { pim } = context as typeof context & { pim?: PimApi };
      // A streamed answer goes out no-store (below), its headers with the first part: each part lists the stale
      // fields that came since the one before, as a plain answer lists its own.
      if (isAsyncIterable(result)) return pim && setResult(markedStale(result, pim));
      const credential = carriesCredential(request.headers);
      const policy = cacheControlFor({
        method: request.method,
        credential,
        freshness: pim?.freshness(),
        failed: Boolean(result.errors?.length) || result.data == null,
      });
      const { cacheControl, keys } = cacheHeaders(policy, credential, () => pim?.tags(), format);
      const stale = pim?.stale() ?? [];
      const headers: Record<string, string> = { 'cache-control': cacheControl };
      // A stale field makes the response not fresh (no-store above); Age says how old its oldest data is.
      if (stale.length > 0) headers['age'] = String(Math.max(...stale.map((field) => field.age)));
      if (keys) headers[surrogateKeyHeader] = keys;
      const http = result.extensions?.http;
      setResult({
        ...result,
        extensions: {
          ...result.extensions,
          ...(stale.length > 0 && { stale }),
          http: { ...http, headers: { ...http?.headers, ...headers } },
        },
      });
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      const headers = response.headers;
      headers.set('vary', withVaried(headers.get('vary') ?? ''));
      // Batches, streamed bodies (never stored, never hashed), refusals and anything else without a policy of its own.
      const streamed = serializedLater(response);
      if (!headers.has('cache-control') || streamed) {
        // Yoga's event stream has `Cache-Control: no-cache`; whatwg-node's set() on headers built from an
        // object keeps a key cased otherwise beside its own, so that one goes first (only there: a delete
        // turns such headers into a map, work a plain answer need not do).
        if (streamed) headers.delete('cache-control');
        headers.set('cache-control', noStore(carriesCredential(request.headers)));
        // Tags are for what a cache may keep: a stream of a result that was cacheable as one body is not.
        headers.delete(surrogateKeyHeader);
      }
      // Synchronous unless there is a body to tag: most responses (POST) go on without a promise.
      if (request.method !== 'GET' || response.status !== 200 || !response.body || streamed) return;
      return withEtag(request, response, setResponse, fetchAPI);
    },
  };
}

/** One part of a streamed answer: the first has `data`, later ones `incremental` payloads at their paths. */
interface Part {
  data?: unknown;
  incremental?: ReadonlyArray<{ data?: unknown; items?: unknown; path?: ReadonlyArray<string | number> }>;
  hasNext?: boolean;
  extensions?: Record<string, unknown>;
}

// Each stale field is first listed in the part that delivers it (the last part takes any left over): a deferred one may
// be read before an earlier part goes out. A part that lists one lists those of the parts before it too: clients merge
// the parts' `extensions` shallowly (urql), so a list of its own fields alone would hide the earlier parts' from them.
function markedStale(parts: AsyncIterable<Part>, pim: PimApi) {
  let told = 0;
  let waiting: StaleField[] = [];
  let listed: StaleField[] = [];
  return mapAsyncIterator(parts[Symbol.asyncIterator](), (part) => {
    const stale = pim.stale();
    if (stale.length > told) waiting = [...waiting, ...stale.slice(told)];
    told = stale.length;
    const here = part.hasNext === false ? waiting : waiting.filter((field) => delivers(part, field.path));
    if (here.length === 0) return part;
    waiting = waiting.filter((field) => !here.includes(field));
    listed = [...listed, ...here];
    return { ...part, extensions: { ...part.extensions, stale: listed } };
  });
}

function delivers(part: Part, path: ReadonlyArray<string | number>): boolean {
  if (part.data !== undefined) return holds(part.data, path);
  return (part.incremental ?? []).some(({ path: at = [], data, items }) => {
    if (items !== undefined) {
      // A @stream payload: `at` is the path of its first item, whose list index is its last key.
      const list = at.slice(0, -1);
      const first = at[at.length - 1];
      const index = path[list.length];
      if (typeof first !== 'number' || typeof index !== 'number' || index < first) return false;
      if (list.length >= path.length || list.some((key, i) => key !== path[i])) return false;
      return holds(items, [index - first, ...path.slice(list.length + 1)]);
    }
    if (at.length > path.length || at.some((key, i) => key !== path[i])) return false;
    return holds(data, path.slice(at.length));
  });
}

const holds = (value: unknown, path: ReadonlyArray<string | number>): boolean =>
  path.every((key) => {
    if (value === null || typeof value !== 'object' || !(key in value)) return false;
    value = (value as Record<string | number, unknown>)[key];
    return true;
  });

// A strong ETag on a GET body, and 304 for an If-None-Match it matches.
async function withEtag(
  request: Request,
  response: Response,
  setResponse: (response: Response) => void,
  fetchAPI: { Response: typeof Response },
) {
  const headers = response.headers;
  const body = await response.text();
  // The media type counts (RFC 9110 §8.8.1): the same bytes as application/json and as graphql-response+json are two
  // representations (Vary: Accept), and one's validator must not revalidate the other.
  const tag = etag(`${headers.get('content-type') ?? ''}\n${body}`);
  headers.set('etag', tag);
  if (matches(request.headers.get('if-none-match'), tag)) {
    headers.delete('content-type');
    headers.delete('content-length');
    return setResponse(new fetchAPI.Response(null, { status: 304, headers }));
  }
  setResponse(new fetchAPI.Response(body, { status: 200, headers }));
}

// Not the `fresh` package: it ignores If-None-Match beside `Cache-Control: no-cache`, which fetch()
// adds to every conditional request, while an origin answers the precondition (RFC 9110 §13.1.2).
function matches(ifNoneMatch: string | null, tag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(',').some((t) => ['*', tag, `W/${tag}`].includes(t.trim()));
}
