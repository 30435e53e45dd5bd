import type { ByteAccount } from '../rest/byte-limits.ts';
import { parsedWeight, sentSize } from '../rest/answer.ts';
import { parseExact } from '../rest/exact-json.ts';
import { PimError, type PimErrorCode } from '../rest/errors.ts';
import { asksPastCache, NOT_FRESH } from '../rest/freshness.ts';
import { keyOf, type KeptAnswer, type LastKnownGood } from '../cache/last-known-good.ts';
import type { Revocations } from '../cache/revocations.ts';
import type { Answer, CallOptions, Freshness, Keepable, Layer } from '../rest/types.ts';

/** How an answer was found: fresh in the cache, from the PIM, stale, or a background refresh's. */
export type CacheOutcome = 'hit' | 'miss' | 'stale' | 'revalidated';

export interface StaleOptions {
  store: LastKnownGood;
  /** The 401s heard here (and, with Redis, in the fleet): what ends a partition's copies. */
  revocations: Revocations;
  /** The 403, 404 and 410 heard here and in the fleet, by store key: what ends the copies of that URL and key. */
  verdicts: Revocations;
  /** Milliseconds after it was produced that a 2xx answer may stand in for a failed call; 0: never. */
  staleIfErrorMs: number;
  /** Milliseconds after its freshness ends that an answer is served while one refresh runs; 0: never. */
  staleWhileRevalidateMs: number;
  /** The HTTP cache's lifetime of answers that name none, which the answers' own freshness does not show. */
  defaultTtlMs: number;
  /** Epoch ms of the latest invalidation of a path: answers stored before it are no longer fresh. */
  invalidatedSince: (path: string) => number;
  /** Time a background refresh has, queue wait included. */
  refreshBudgetMs: number;
  /** Opens the byte account of a background refresh, which belongs to no GraphQL request, in its credential's share. */
  openBytes: (credential: string) => ByteAccount;
  onOutcome?: ((outcome: CacheOutcome, reason?: string) => void) | undefined;
}

/**
 * How far another instance's clock may be from this one's: its copy in Redis, or its record of a 401, is judged with
 * this margin, so a copy of a call sent up to this long after the 401 is not served either.
 */
export const CLOCK_MARGIN_MS = 5_000;

// Failures that say the PIM cannot answer now; any other is its answer (401, 403, 404) or ours.
const outageCodes = new Set<PimErrorCode>([
  'UPSTREAM_ERROR',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_RATE_LIMITED',
  'BUDGET_EXCEEDED',
]);
// A 4xx other than 429 is the PIM's verdict on the request; a 2xx that is not JSON is a maintenance page, and a 4xx
// page (a WAF's 403, an auth proxy's 401, an empty 410) is no word of the PIM's. Nor is a 401 to the server's own key
// (PIM_API_KEY) a word on the keyless callers' answers: the operator's configuration fault.
const isVerdict = (error: unknown): error is PimError =>
  error instanceof PimError &&
  error.code !== 'SERVER_CREDENTIALS_REJECTED' &&
  error.status !== undefined &&
  error.status >= 400 &&
  error.status < 500 &&
  error.status !== 429 &&
  error.page !== true;
const isOutage = (error: unknown): error is PimError =>
  error instanceof PimError && outageCodes.has(error.code) && !isVerdict(error);
// Of those, the PIM's word on the key or the resource itself (not on the request's form, nor a proxy's 408).
const endsKeptCopy = (error: unknown): error is PimError =>
  isVerdict(error) && (error.status === 401 || error.status === 403 || error.status === 404 || error.status === 410);

/**
 * The client step that serves stale answers (RFC 5861): it keeps the last 2xx answer of every URL
 * per credential, answers a call whose freshness ran out inside its stale-while-revalidate window
 * at once while one background refresh per key runs, and answers a call the PIM failed (5xx, 429,
 * timeout, no connection, open breaker) with the kept answer while inside its stale-if-error window.
 */
export function createStaleLayer(options: StaleOptions): Layer {
  const { store, revocations, verdicts, invalidatedSince, onOutcome } = options;
  return (next) => {
    const refreshing = new Set<string>();
    // A 401 is the PIM's word on the key, whatever the URL, and a 403, 404 or 410 its word on the URL: no copy of a
    // call sent before it (here, or in Redis: another instance's call, answered after it) is served again. Copies kept
    // before calls carried their time are judged by when they were produced. `since`: the latest verdict.
    const current = (found: KeptAnswer | undefined, since: number) =>
      found && (found.sentAt ?? found.storedAt) - (found.shared ? CLOCK_MARGIN_MS : 0) > since ? found : undefined;
    // The latest verdict heard here on a call of `who` (its identity: a 401 is on the key, whatever rode along with it) to
    // the URL of `key`.
    const heard = (who: string, key: string) => Math.max(revocations.since(who), verdicts.since(key));
    // The copy that stands in for a failed call now, if any: the fleet's 401s, and its 403s, 404s and 410s of the URL,
    // are read only then, at most once a second a key and URL (an instance that never heard them serves no older copy).
    const standIn = async (lookup: Promise<KeptAnswer | undefined>, who: string, key: string) => {
      const [found, ...inFleet] = await Promise.all([lookup, revocations.inFleet(who), verdicts.inFleet(key)]);
      // What this instance heard is read after the wait: a verdict heard meanwhile counts too.
      const since = () => Math.max(...inFleet, heard(who, key));
      let copy = current(found, since());
      // The copy held here, which a verdict ended, hides none another instance read after it (the group, or the key,
      // back since): Redis's is looked for past it.
      if (!copy && found && !found.shared && store.shared) copy = current(await store.find(key, found), since());
      return copy && Date.now() <= copy.errorUntil ? copy : undefined;
    };
    // When the call was sent before an invalidation of its path that came while it was out: that invalidation's time.
    const lateOf = (path: string, sentAt: number) => {
      const invalidated = invalidatedSince(path);
      return invalidated >= sentAt ? invalidated : undefined;
    };
    // A copy read after that invalidation is newer than such a call's answer (the PIM slow for it), and stays the last
    // good one whatever the answer is (one that may not be kept, or a verdict: it ended the newer copy).
    const newerHeld = (held: KeptAnswer | undefined, late: number | undefined) =>
      late !== undefined && held !== undefined && held.storedAt > late;
    // A verdict ends the kept copy, but for a newer one (here, or in Redis: `late` has the store check there first).
    const endWith = (key: string, call: Judged, path: string, sentAt: number, error: unknown) => {
      if (!endsKeptCopy(error)) return;
      const late = lateOf(path, sentAt);
      if (error.status === 401) revocations.refused(identityOf(call), store.holds(call.partition));
      // Recorded before the copy in Redis, its mark, is deleted (the late forget deletes it too: a copy another instance
      // read before the invalidation, held in its memory, then had no record and no mark left for the next verdicts).
      // Sent before an invalidation that came while it was out, it is no word on the copies read after it: recorded up
      // to the invalidation only, less the margin another instance's clock adds when it reads the record.
      else
        verdicts.refused(key, store.peek(key) !== undefined, late === undefined ? undefined : late - CLOCK_MARGIN_MS);
      if (!newerHeld(store.peek(key), late)) store.forget(key, false, late);
    };
    const keep = (key: string, call: Judged, path: string, sentAt: number, answer: Answer, always = false) => {
      const { kept } = answer;
      const late = lateOf(path, sentAt);
      const held = store.peek(key);
      if (newerHeld(held, late)) return;
      // A newer answer that may not be kept (`no-store`, `Vary: *`) ends the older copy all the same (in Redis too):
      // it must not stand in for the newer answer at the next outage.
      if (!kept || kept.hints.noStore) return void store.forget(key, true, late);
      const entry = keptEntry(kept, answer.freshness, options);
      // Read before an invalidation that came while it was out: still last-known-good, but as old as its call, so
      // stale-while-revalidate (which serves only copies newer than the invalidation) never serves it.
      if (late !== undefined) entry.storedAt = Math.min(entry.storedAt, sentAt - 1);
      // Served again from the HTTP cache (same production time, same body): the kept copy is already this one. Another
      // body produced within the second (a publish read right after the previous read) is newer, and kept.
      if (!always && held && Math.abs(held.storedAt - entry.storedAt) < 1_000 && held.text === entry.text) return;
      // Kept while it may stand in for a failure, even when it stays fresh longer: a purge, an eviction or a lost
      // Redis may take the HTTP cache's copy first.
      if (entry.errorUntil > Date.now() || entry.revalidateUntil > entry.freshUntil) {
        store.keep(key, entry, late);
        revocations.kept(identityOf(call), Math.max(entry.errorUntil, entry.revalidateUntil));
      }
      // A newer answer that may not be served stale (must-revalidate) ends the older copy (in Redis too), which
      // must not stand in for it.
      else if (held || kept.hints.mustRevalidate) store.forget(key, true, late);
    };
    // The refresh is the credential's own call through the same queue and breaker; no client waits on it.
    const refresh = (
      key: string,
      request: Parameters<typeof next>[0],
      { headers, queueKey, partition, identity }: CallOptions,
    ) => {
      if (refreshing.has(key)) return;
      refreshing.add(key);
      const bytes = options.openBytes(queueKey ?? partition);
      const sentAt = Date.now();
      // A copy is held (none is refreshed otherwise): a PIM that asks for time fails the refresh at once, as any call a
      // copy stands in for, and a request that joins its call is served that copy, not held for the wait.
      const deadline = sentAt + options.refreshBudgetMs;
      // The time the PIM asked for (Retry-After), in which no refresh of this key asks it again (at most a refresh's).
      let askedMs = 0;
      const call = { headers, queueKey, partition, identity, bytes, deadline, standIn: true as const };
      next(request, call)
        .then(
          (answer) => (keep(key, call, request.path, sentAt, answer, true), onOutcome?.('revalidated')),
          (error: unknown) => {
            endWith(key, call, request.path, sentAt, error);
            // The retry step's wait it did not make, or (no retry left to make: PIM_RETRIES=0) the PIM's own ask.
            const asked = error instanceof PimError ? Math.max(error.unwaitedMs ?? 0, error.retryAfterMs ?? 0) : 0;
            askedMs = Math.min(asked, options.refreshBudgetMs);
          },
        )
        .finally(() => {
          bytes.release();
          if (askedMs > 0) setTimeout(() => refreshing.delete(key), askedMs).unref();
          else refreshing.delete(key);
        });
    };
    return async (request, call) => {
      // The store key: the call's credential partition and path.
      const key = keyOf(call.partition, request.path);
      // A call that asks past the caches (the readiness probe) wants the PIM's own word, never a copy.
      const own = asksPastCache(call.headers);
      const held = own ? undefined : current(store.peek(key), heard(identityOf(call), key));
      const now = Date.now();
      if (
        held &&
        now >= held.freshUntil &&
        now < held.revalidateUntil &&
        invalidatedSince(request.path) < held.storedAt
      ) {
        refresh(key, request, call);
        return served(held, 'revalidating', onOutcome);
      }
      // Looked up once a call, and used by its failure too: each retry asking again waited REDIS_TIMEOUT_MS on a silent
      // Redis again.
      let lookup: Promise<KeptAnswer | undefined> | undefined;
      const sentAt = Date.now();
      try {
        // No copy here that may stand in (none, or one past its window): one another instance kept, in Redis, is looked
        // for only if the PIM asks for time.
        const answer = await next(
          request,
          held && now < held.errorUntil
            ? { ...call, standIn: true }
            : !own && store.shared
              ? {
                  ...call,
                  findStandIn: async () =>
                    (await standIn((lookup ??= store.find(key)), identityOf(call), key)) !== undefined,
                }
              : call,
        );
        // The readiness probe's call is no caller's load: kept and counted only for the others.
        if (!own) {
          keep(key, call, request.path, sentAt, answer);
          onOutcome?.(answer.cached ? 'hit' : 'miss');
        }
        // Read before an invalidation of its path that came while it was out: what the purge ended, not fresh.
        const freshness = invalidatedSince(request.path) >= sentAt ? NOT_FRESH : answer.freshness;
        return { body: answer.body, size: answer.size, weight: answer.weight, freshness };
      } catch (error) {
        // The PIM's word on this URL and key (revoked, forbidden, gone) outlives the copy it replaces; the
        // readiness probe's own call (a made-up id) has no copy to end.
        if (!own) endWith(key, call, request.path, sentAt, error);
        if (own) throw error;
        if (!isOutage(error)) throw counted(error, onOutcome);
        const found = await standIn(lookup ?? store.find(key), identityOf(call), key);
        if (!found) throw counted(error, onOutcome);
        return served(found, error.code, onOutcome);
      }
    };
  };
}

// The windows of RFC 5861: the upstream's own directives, else the settings. Stale-if-error counts
// from when the answer was produced, as "answered within the last N seconds" reads.
function keptEntry({ text, hints, ageS, sentAt }: Keepable, freshness: Freshness, options: StaleOptions): KeptAnswer {
  const now = Date.now();
  const storedAt = now - (ageS ?? 0) * 1_000;
  // Without a lifetime of its own, an answer is fresh as long as the HTTP cache's default keeps it.
  // Ending a little early (a second, at most half the lifetime: max-age=1 stays fresh for half of it): the
  // HTTP cache counts from its own receipt (of the headers; this runs once the body is read), and once it
  // holds an answer stale it revalidates inside the call, which a client would wait for.
  const own = hints.explicit || hints.noCache;
  const leftMs = own ? freshness.maxAgeS * 1_000 : options.defaultTtlMs;
  const lifetimeMs = (own ? (ageS ?? 0) * 1_000 : 0) + leftMs - Math.min(1_000, leftMs / 2);
  const freshUntil = storedAt + Math.max(0, lifetimeMs);
  // The upstream's own directives are in seconds, as HTTP writes them. `must-revalidate` forbids what the settings
  // would allow (RFC 9111 §4.2.4), not what the upstream's own stale-* directives allow in the same answer.
  const whileRevalidateMs = hints.noCache
    ? 0
    : hints.staleWhileRevalidateS !== undefined
      ? hints.staleWhileRevalidateS * 1_000
      : hints.mustRevalidate
        ? 0
        : options.staleWhileRevalidateMs;
  const ifErrorUntil =
    hints.staleIfErrorS !== undefined
      ? freshUntil + hints.staleIfErrorS * 1_000
      : hints.mustRevalidate
        ? 0
        : storedAt + options.staleIfErrorMs;
  return {
    text,
    storedAt,
    // Produced earlier (a CDN's Age), it was asked for no later. An answer the HTTP cache replays was asked for before it
    // was stored there, which its whole-second Age tells only roughly, by another instance's clock when in Redis.
    sentAt: sentAt === undefined ? storedAt - CLOCK_MARGIN_MS : Math.min(sentAt, storedAt),
    freshUntil,
    revalidateUntil: freshUntil + whileRevalidateMs,
    // Turned off by the setting, never by the upstream alone.
    errorUntil: options.staleIfErrorMs > 0 ? ifErrorUntil : 0,
  };
}

// A failure the PIM answered (a 404 the HTTP cache replays, a 5xx no copy stood in for) is a load as any other: `hit`
// when no call went out for it, else `miss`, or the hit ratio leaves out what the cache spares the PIM of them.
function counted(error: unknown, onOutcome: StaleOptions['onOutcome']): unknown {
  if (error instanceof PimError && error.status !== undefined) onOutcome?.(error.cached ? 'hit' : 'miss');
  return error;
}

// What a call's 401 is judged by: its identity, else (the readiness probe, tests) its partition.
type Judged = Pick<CallOptions, 'partition' | 'identity'>;
const identityOf = (call: Judged) => call.identity ?? call.partition;

function served(
  entry: { text: string; storedAt: number },
  reason: string,
  onOutcome: StaleOptions['onOutcome'],
): Answer {
  onOutcome?.('stale', reason);
  const ageS = Math.max(0, Math.floor((Date.now() - entry.storedAt) / 1_000));
  const { text } = entry;
  return {
    body: parseExact(text),
    size: sentSize(text),
    weight: parsedWeight(text),
    freshness: NOT_FRESH,
    stale: { ageS, reason },
  };
}
