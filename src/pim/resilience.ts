import { setTimeout as sleep } from 'node:timers/promises';
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import { isUpstreamAnswer, PimError, pimError, type PimErrorCode } from './errors.ts';
import type { PimRequest } from './endpoints.ts';
import { createUpstreamLog, type StateLogger } from './upstream-log.ts';
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
  /** Told when the breaker opens or closes and when the upstream stops or starts answering. */
  logger?: StateLogger | undefined;
}

/** Ceiling of any one backoff (Retry-After aside, which only the budget bounds). */
const RETRY_MAX_DELAY_MS = 2_000;

/** Failures that say the upstream itself is unwell; these feed the breaker. */
const faultCodes = new Set<PimErrorCode>(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE']);
const retryStatuses = new Set([429, 502, 503, 504]);
const resetCodes = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
// No Isolated: only breaker.isolate() enters it, and nothing calls that.
const breakerStates = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
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
  logger,
}: ResilienceOptions & ResilienceHooks): { layers: Layer[]; status: UpstreamStatus; close(): void } {
  const breaker = circuitBreaker(handleWhen(isFault), {
    halfOpenAfter: halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(breakerThreshold),
  });
  // A breaker cannot change more often than once per half-open delay, so neither does its log.
  const log = createUpstreamLog(logger, halfOpenAfterMs);
  breaker.onStateChange((state) => {
    if (state === CircuitState.Open) log.breaker('open');
    if (state === CircuitState.Closed) log.breaker('closed');
  });

  const breakerLayer: Layer = (next) => async (request, call) => {
    let answer: PimError | undefined;
    let unproven: unknown;
    try {
      const result = await breaker.execute(async () => {
        try {
          const result = await next(request, call);
          log.answered();
          return result;
        } catch (error) {
          log.failed(error);
          if (isFault(error)) throw error;
          // An answer (a 4xx) is the upstream speaking: it counts as a success, then goes on.
          if (error instanceof PimError && isUpstreamAnswer(error.status)) {
            answer = error;
            return undefined;
          }
          // Neither answer nor fault (the caller left, the budget ran out): it proves nothing, so it
          // must not close a half-open breaker, which cockatiel does on any error it does not handle.
          if (breaker.state === CircuitState.HalfOpen) {
            unproven = error;
            throw pimError('UPSTREAM_UNAVAILABLE', error);
          }
          throw error;
        }
      });
      if (answer) throw answer;
      return result!;
    } catch (error) {
      if (unproven !== undefined) throw unproven;
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
      return breakerStates[breaker.state as keyof typeof breakerStates];
    },
  };
  return { layers: [breakerLayer, retryLayer], status, close: log.close };
}
