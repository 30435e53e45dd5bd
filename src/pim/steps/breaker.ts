import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import { isUpstreamAnswer, PimError, pimError, type PimErrorCode } from '../rest/errors.ts';
import type { RetryOptions } from './retry.ts';
import { createUpstreamLog, type StateLogger } from './upstream-log.ts';
import type { Layer, UpstreamStatus } from '../rest/types.ts';

/** The retry settings (retry.ts) travel with the breaker's: one configuration group. */
export interface ResilienceOptions extends Omit<RetryOptions, 'onRetry'> {
  /** Consecutive upstream failures that open the breaker. */
  breakerThreshold: number;
  /** Time the breaker stays open before it lets one probe call through. */
  halfOpenAfterMs: number;
}

/** What the policies report; not configuration. */
export interface ResilienceHooks {
  /** Told before each retry of `request` is sent. */
  onRetry?: RetryOptions['onRetry'];
  /** Told when the breaker opens or closes and when the upstream stops or starts answering. */
  logger?: StateLogger | undefined;
}

/** Failures that say the upstream itself is unwell; these feed the breaker. */
const faultCodes = new Set<PimErrorCode>(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE']);
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

/**
 * The circuit breaker step (cockatiel): after consecutive upstream faults it fails calls at once,
 * then lets one probe through. Retries (retry.ts) go inside it, so a retried call is one decision.
 */
export function createBreaker({
  breakerThreshold,
  halfOpenAfterMs,
  logger,
}: Pick<ResilienceOptions, 'breakerThreshold' | 'halfOpenAfterMs'> & Pick<ResilienceHooks, 'logger'>): {
  layer: Layer;
  status: UpstreamStatus;
  /** The error a call let through before the breaker opened gets instead of being sent now; else nothing. */
  stop(): Error | undefined;
  close(): void;
} {
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

  const status: UpstreamStatus = {
    get breaker() {
      return breakerStates[breaker.state as keyof typeof breakerStates];
    },
  };
  // Half-open lets its probe through, which may itself have queued: only an open breaker stops a call.
  const stop = () =>
    breaker.state === CircuitState.Open
      ? pimError(
          'UPSTREAM_UNAVAILABLE',
          new BrokenCircuitError('the upstream circuit breaker opened while the call waited'),
        )
      : undefined;
  return { layer: breakerLayer, status, stop, close: log.close };
}
