import { setTimeout as sleep } from 'node:timers/promises';
import type { PimRequest } from '../rest/endpoints.ts';
import { PimError } from '../rest/errors.ts';
import type { CallOptions, Layer } from '../rest/types.ts';

export interface RetryOptions {
  /** Retries after the first attempt of a GET that failed with 429/502/503/504 or a reset. */
  retries: number;
  /** Ceiling of the first jittered backoff; it doubles with each retry. */
  retryBaseMs: number;
  /** Told of each retry of `request` that was an attempt at the PIM (not one that never left the queue). */
  onRetry?: ((request: PimRequest) => void) | undefined;
  /** Aborted as the shutdown's grace is about to end: a call waiting to retry fails then with the failure it waited on. */
  shutdown?: AbortSignal | undefined;
}

/** Ceiling of any one backoff (Retry-After aside, which only the budget bounds). */
const RETRY_MAX_DELAY_MS = 2_000;

const retryStatuses = new Set([429, 502, 503, 504]);
const resetCodes = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);

function isRetryable(error: unknown): error is PimError {
  if (!(error instanceof PimError)) return false;
  if (error.status !== undefined) return retryStatuses.has(error.status);
  // Timeouts are never retried: the time is spent, and a retry would only pile onto a slow upstream.
  return error.code === 'UPSTREAM_UNAVAILABLE' && resetCodes.has((error.cause as { code?: string })?.code ?? '');
}

/**
 * Waits `ms` before a call is sent again. Rejects with the caller's reason when it leaves, and with `failure`, the
 * failure the call waits to retry, at `shutdown`; `failure` then asks no one to wait for it (`unwaitedMs`).
 */
export async function waitToRetry(ms: number, failure: PimError, signal?: AbortSignal, shutdown?: AbortSignal) {
  const either = signal && shutdown ? AbortSignal.any([signal, shutdown]) : (signal ?? shutdown);
  await sleep(ms, undefined, { signal: either }).catch(() => {
    if (signal?.aborted) throw signal.reason;
    failure.unwaitedMs = undefined;
    throw failure;
  });
}

/** The step that repeats a failed GET a bounded number of times, with jittered backoff, within the budget. */
export function createRetry({ retries, retryBaseMs, onRetry, shutdown }: RetryOptions): Layer {
  return (next) => async (request, call) => {
    const { signal } = call;
    for (let attempt = call.attemptsMade ?? 0; ; attempt++) {
      try {
        if (attempt === 0) return await next(request, call);
        // Judged by the telemetry step below: a retry still queued when its budget ran out (or the breaker opened, or
        // its caller left) never reached the PIM.
        const tried: NonNullable<CallOptions['attempt']> = {};
        try {
          return await next(request, { ...call, attempt: tried });
        } finally {
          if (tried.counted !== false) onRetry?.(request);
        }
      } catch (error) {
        // Stopped, no `unwaitedMs` is set: the failure is every joiner's answer too, none waits to ask again.
        if (attempt >= retries || signal?.aborted || shutdown?.aborted || !isRetryable(error)) throw error;
        // Full jitter spreads the retries of many callers that failed at the same moment.
        const backoff = Math.random() * Math.min(RETRY_MAX_DELAY_MS, retryBaseMs * 2 ** attempt);
        const wait = Math.max(backoff, error.retryAfterMs ?? 0);
        // The PIM asks for time (throttled, or down for a while) and a kept copy can answer now: it does. The
        // breaker's trial, throttled, is an answer to report now. A Retry-After past the operation's deadline cannot
        // be honoured: fail now, not later. All are this call's.
        const askedForTime = error.status === 429 || error.retryAfterMs !== undefined;
        const standIn =
          askedForTime && (call.standIn === true || (call.findStandIn !== undefined && (await call.findStandIn())));
        const reportNow = standIn || (call.trial && error.status === 429);
        if (reportNow || wait >= call.deadline - Date.now()) {
          error.unwaitedMs = wait;
          error.attemptsMade = attempt + 1;
          throw error;
        }
        await waitToRetry(wait, error, signal, shutdown);
      }
    }
  };
}
