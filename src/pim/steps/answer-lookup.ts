import type { HttpCache } from '../cache/cache.ts';
import { asksPastCache } from '../rest/freshness.ts';
import type { Layer } from '../rest/types.ts';
import { sentHeaders } from './send.ts';

export interface AnswerLookupOptions {
  cache: Pick<HttpCache, 'lookup' | 'remember'>;
  /** Told about each call answered here. */
  onHit?: (() => void) | undefined;
  /** Epoch ms of the latest invalidation of a request path (POST /cache/invalidate, here or another instance's). */
  invalidatedSince?: ((path: string) => number) | undefined;
}

/**
 * The step that answers with a fresh answer already parsed (the HTTP cache's answer store), and
 * hands every answer from further in to that store, which keeps it while the HTTP cache holds it fresh.
 */
export function createAnswerLookup({ cache, onHit, invalidatedSince = () => 0 }: AnswerLookupOptions): Layer {
  return (next) => async (request, call) => {
    // A stored response's Vary values are those of the headers the call goes out with (`accept-encoding`, which
    // most servers vary on, included), not of the call's own.
    const headers = sentHeaders(call.headers);
    const cached = asksPastCache(call.headers) ? undefined : cache.lookup(request.path, call.partition, headers);
    if (cached !== undefined) return (onHit?.(), cached);
    const startedAt = Date.now();
    const answer = await next(request, call);
    // A kept copy standing in for a failed call is not the body of the response the HTTP cache holds fresh. Nor is an
    // answer to a call that began before an invalidation of its path (one sent before it, or a hit of an entry it
    // ended): `remember` fills whatever entry a fresh hit opened meanwhile, and would serve that old body as fresh.
    if (!answer.stale && invalidatedSince(request.path) < startedAt)
      cache.remember(request.path, call.partition, headers, answer);
    return answer;
  };
}
