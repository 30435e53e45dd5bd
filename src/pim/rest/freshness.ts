import type { Freshness, StaleHints } from './types.ts';

type HeaderValue = string | string[] | undefined;

/** Freshness of an answer that may not be reused. */
export const NOT_FRESH: Freshness = { maxAgeS: 0, sharedMaxAgeS: 0, shared: false };

/**
 * Reads an upstream response's freshness from its `cache-control`, `expires` and `date` headers and its
 * `age` (undici's cache sets it on the answers it serves), as RFC 9111 computes a response's remaining
 * lifetime, for a browser (`max-age`, else `Expires`) and for a shared cache (`s-maxage` first) apart.
 */
export function freshnessOf(
  headers: { 'cache-control'?: HeaderValue; expires?: HeaderValue; date?: HeaderValue },
  age: HeaderValue,
): Freshness {
  const directives = parseDirectives(String(headers['cache-control'] ?? ''));
  if (directives.has('no-store') || directives.has('no-cache')) return NOT_FRESH;
  const maxAge = seconds(directives.get('max-age')) ?? expiresIn(headers.expires, headers.date);
  const sharedMaxAge = seconds(directives.get('s-maxage')) ?? maxAge;
  const shared = !directives.has('private') && sharedMaxAge !== undefined;
  const ageS = ageOf(headers, age);
  const left = (lifetime: number | undefined) => Math.max(0, (lifetime ?? 0) - ageS);
  return { maxAgeS: left(maxAge), sharedMaxAgeS: shared ? left(sharedMaxAge) : 0, shared };
}

/**
 * An answer's age when read, in seconds (RFC 9111 §4.2.3, as undici's cache counts it): its `Age`, or the time since
 * its `Date` if longer (a cache in front of the PIM that sets no Age, a PIM clock behind). `Date` is whole seconds,
 * so the answer was made up to a second after it: that second is not counted, so a fresh answer is never made older.
 */
export function ageOf(headers: { date?: HeaderValue }, age: HeaderValue): number {
  const stated = seconds(age === undefined ? undefined : String(age)) ?? 0;
  if (headers.date === undefined) return stated;
  const apparent = Math.floor((Date.now() - httpDate(headers.date)) / 1000) - 1;
  return apparent > stated ? Math.min(apparent, MAX_SECONDS) : stated;
}

/** `Vary: *`: no later request matches (RFC 9111 §4.1), so the answer is never reused. */
export const varyAll = (vary: HeaderValue): boolean => /(^|,)\s*\*\s*(,|$)/.test(String(vary ?? ''));

/** A freshness read `elapsedMs` ago, with the whole seconds since taken off both lifetimes. */
export function aged({ maxAgeS, sharedMaxAgeS, shared }: Freshness, elapsedMs: number): Freshness {
  const elapsedS = Math.floor(elapsedMs / 1000);
  return { maxAgeS: Math.max(0, maxAgeS - elapsedS), sharedMaxAgeS: Math.max(0, sharedMaxAgeS - elapsedS), shared };
}

/** When the least fresh answer of a result stops being fresh (epoch ms), for a browser and a shared cache. */
export interface Expiry {
  maxUntil: number;
  sharedUntil: number;
  shared: boolean;
}

// Whole seconds, as `aged` counts them.
const left = (until: number, now: number) => Math.max(0, Math.ceil((until - now) / 1_000));

/** What `expiry` leaves at `now`, in whole seconds. */
export const freshnessAt = (expiry: Expiry, now = Date.now()): Freshness => ({
  maxAgeS: left(expiry.maxUntil, now),
  sharedMaxAgeS: left(expiry.sharedUntil, now),
  shared: expiry.shared,
});

/** A call that asks past the caches (`no-cache`, as the readiness probe sends): it wants the PIM's own word. */
export const asksPastCache = (headers: Readonly<Record<string, string>>) =>
  directivesOf(headers['cache-control'] ?? '').has('no-cache');

/**
 * The lifetime `Expires` gives, counted from the response's `Date` (RFC 9111 §4.2.1): seconds, 0 for a date
 * that is no date (§5.3: already expired), undefined without the header.
 */
function expiresIn(expires: HeaderValue, date: HeaderValue): number | undefined {
  if (expires === undefined) return undefined;
  const at = httpDate(expires);
  const from = date === undefined ? Date.now() : httpDate(date);
  if (Number.isNaN(at) || Number.isNaN(from)) return 0;
  return Math.min(Math.max(0, Math.floor((at - from) / 1000)), MAX_SECONDS);
}

/** Reads the {@link StaleHints} of one upstream response. */
export function staleHintsOf(cacheControl: HeaderValue, expires?: HeaderValue): StaleHints {
  const directives = parseDirectives(String(cacheControl ?? ''));
  return {
    noStore: directives.has('no-store'),
    noCache: directives.has('no-cache'),
    explicit: directives.has('max-age') || directives.has('s-maxage') || expires !== undefined,
    mustRevalidate: directives.has('must-revalidate') || directives.has('proxy-revalidate'),
    staleWhileRevalidateS: seconds(directives.get('stale-while-revalidate')),
    staleIfErrorS: seconds(directives.get('stale-if-error')),
  };
}

// An upstream sends a handful of distinct Cache-Control values, each read twice per answer: each is parsed
// once. Bounded: a PIM that made up a value per answer would start it afresh rather than grow it.
const parsed = new Map<string, ReadonlyMap<string, string | undefined>>();
const MAX_PARSED = 256;

function parseDirectives(header: string): ReadonlyMap<string, string | undefined> {
  let directives = parsed.get(header);
  if (directives) return directives;
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(header, (directives = directivesOf(header)));
  return directives;
}

/**
 * The directives of a Cache-Control (or Pragma) value by lower-case name, with their values unquoted. Not kept:
 * a client's header is read with it, and a client writes any value it likes.
 */
export function directivesOf(header: string): ReadonlyMap<string, string | undefined> {
  const directives = new Map<string, string | undefined>();
  for (const part of header.split(',')) {
    const [name, value] = part.split('=', 2);
    const key = name!.trim().toLowerCase();
    // Of a directive given twice, the first counts (RFC 9111 §4.2.1), as undici reads it.
    if (key && !directives.has(key)) directives.set(key, value?.trim().replace(/^"|"$/g, ''));
  }
  return directives;
}

// Longer lifetimes count as this one (RFC 9111 §1.2.2), which a header still writes in digits.
const MAX_SECONDS = 2 ** 31;

/** A delta-seconds value (`max-age`, `Age`): digits only, so a negative or made-up one is no value. */
export function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value), MAX_SECONDS);
}

// An HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, or the obsolete RFC 850 and asctime forms, as undici reads them;
// Date.parse alone takes `3600` for the year 3600 and `12/31/2099` for a date.
const HTTP_DATE =
  /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

function httpDate(value: HeaderValue): number {
  const text = String(value);
  // Answers of the same second carry the same Date: the last one read is not parsed again.
  if (text === lastDate) return lastDateMs;
  // asctime carries no zone: it is GMT.
  const ms = HTTP_DATE.test(text) ? Date.parse(text.endsWith('GMT') ? text : `${text} GMT`) : NaN;
  [lastDate, lastDateMs] = [text, ms];
  return ms;
}
let lastDate: string | undefined;
let lastDateMs = NaN;
