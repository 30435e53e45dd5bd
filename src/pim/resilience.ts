import { setTimeout as sleep } from 'node:timers/promises';
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import { isUpstreamAnswer, PimError, pimError, type PimErrorCode } from './errors.ts';
import type { PimRequest } from './endpoints.ts';
import type { Layer, UpstreamStatus } from './types.ts';

export interface ResilienceOptions {
  /** Retries after the first attempt of a GET that failed with 429/502/503/504 or a reset. */
  retries: number;
  /** Ceiling of the first jittered backoff; it doubles with each retry. */
  retryBaseMs: number;
  /** Consecutive upstream failures that open the breaker. */
  breakerThreshold: number;
  /** Time the breaker stays open before it lets one probe call through. */
  halfOpenAfterMs: number;
}

/** What the policies report; not configuration. */
export interface ResilienceHooks {
  /** Told before each retry of `request` is sent. */
  onRetry?: ((request: PimRequest) => void) | undefined;
}

/** Ceiling of any one backoff (Retry-After aside, which only the budget bounds). */
const RETRY_MAX_DELAY_MS = 2_000;

/** Failures that say the upstream itself is unwell; these feed the breaker. */
const faultCodes = new Set<PimErrorCode>(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE']);
const retryStatuses = new Set([429, 502, 503, 504]);
const resetCodes = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const breakerStates = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'isolated',
} as const;

/** Every state the breaker can report, as metrics label it. */
export const breakerStateNames = Object.values(breakerStates);

// An answer is the upstream's own verdict on one request, whatever code it maps to: it says the
// upstream is up. Counting them would let one client open the breaker for everyone with bad URLs.
const isFault = (error: unknown) =>
  error instanceof PimError && faultCodes.has(error.code) && !isUpstreamAnswer(error.status);

function isRetryable(error: unknown): error is PimError {
  if (!(error instanceof PimError)) return false;
  if (error.status !== undefined) return retryStatuses.has(error.status);
  // Timeouts are never retried: the time is spent, and a retry would only pile onto a slow upstream.
  return error.code === 'UPSTREAM_UNAVAILABLE' && resetCodes.has((error.cause as { code?: string })?.code ?? '');
}

/**
 * The upstream policies as client layers, outermost first: a circuit breaker (cockatiel) around
 * bounded, jittered retries. Every call through them is a GET, so each is safe to repeat.
 */
export function createResilience({
  retries,
  retryBaseMs,
  breakerThreshold,
  halfOpenAfterMs,
  onRetry,
}: ResilienceOptions & ResilienceHooks): { layers: Layer[]; status: UpstreamStatus } {
  const breaker = circuitBreaker(handleWhen(isFault), {
    halfOpenAfter: halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(breakerThreshold),
  });

  const breakerLayer: Layer = (next) => async (request, call) => {
    let answer: PimError | undefined;
    try {
      const result = await breaker.execute(async () => {
        try {
          return await next(request, call);
        } catch (error) {
          // A probe its caller abandoned proved nothing: the breaker must not close on it.
          if (!(error instanceof PimError) && breaker.state === CircuitState.HalfOpen) {
            throw pimError('UPSTREAM_UNAVAILABLE', error);
          }
          // A 4xx is the upstream answering: it counts as a success for the breaker, then goes on.
          if (!(error instanceof PimError) || error.status === undefined || isFault(error)) throw error;
          answer = error;
          return undefined;
        }
      });
      if (answer) throw answer;
      return result!;
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw pimError('UPSTREAM_UNAVAILABLE', error);
      throw error;
    }
  };

  const retryLayer: Layer = (next) => async (request, call) => {
    const { signal } = call;
    for (let attempt = 0; ; attempt++) {
      try {
        if (attempt > 0) onRetry?.(request);
        return await next(request, call);
      } catch (error) {
        if (attempt >= retries || signal?.aborted || !isRetryable(error)) throw error;
        // Full jitter spreads the retries of many callers that failed at the same moment.
        const backoff = Math.random() * Math.min(RETRY_MAX_DELAY_MS, retryBaseMs * 2 ** attempt);
        const wait = Math.max(backoff, error.retryAfterMs ?? 0);
        // A Retry-After past the operation's deadline cannot be honoured: fail now, not later.
        if (wait >= call.deadline - Date.now()) throw error;
        await sleep(wait, undefined, { signal }).catch(() => {
          throw signal?.reason ?? error;
        });
      }
    }
  };

  const status: UpstreamStatus = {
    get breaker() {
      return breakerStates[breaker.state];
    },
  };
  return { layers: [breakerLayer, retryLayer], status };
}
