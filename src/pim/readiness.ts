import { isQueuedOut } from './admission/fair-queue.ts';
import type { PimClient } from './client.ts';
import { PROBE_ANSWER_MS } from './rest/endpoints.ts';
import { PimError } from './rest/errors.ts';
import { refusedByBreaker } from './steps/breaker.ts';
import { isProbeAnswer, isRedirect } from './steps/upstream-faults.ts';

export interface ReadinessOptions {
  client: PimClient;
  /** How recent the upstream's last answer must be. */
  maxAgeMs: number;
  /** PIM_TIMEOUT_MS: how long a healthy PIM may take to answer a call. */
  callTimeoutMs: number;
}

// Readiness answers by then whatever the probe does (Kubernetes' default probe timeout is 1 s); a
// probe still running goes on, and its outcome answers the next check.
const ANSWER_WITHIN_MS = 900;
// A probe the PIM did not answer answers the checks of the next second too (at most the max age): `/readiness` is public,
// and while the PIM refuses the server's key or sends a page every check was a new probe, one as soon as the last ended.
const NOT_ANSWERED_FOR_MS = 1_000;

/**
 * Ready means: the breaker is closed and the upstream itself answered (2xx or 4xx) a probe within
 * `maxAgeMs`; a refused server key or a 2xx that is not JSON is no answer. Traffic is no evidence,
 * since the HTTP cache may have answered it; so at most one cheap probe per `maxAgeMs` asks the
 * upstream past the cache. A 404 for its made-up id is an answer too.
 * The probe goes through the breaker: while it is open the probe fails fast, and once its half-open
 * delay has passed the probe is the one call it lets through, so readiness recovers with no traffic.
 * A half-open breaker holds every other call until its probe call ends, so no check waits for the
 * probe longer than `ANSWER_WITHIN_MS`, and checks share the one probe in flight. While a probe is
 * still running, an answer to the one before counts for one probe time longer: a slow probe alone
 * does not turn a ready replica away.
 */
export function createReadiness({ client, maxAgeMs, callTimeoutMs }: ReadinessOptions): () => Promise<boolean> {
  // On the monotonic clock: a wall clock stepped back held a failure (503, no probe), or an answer (200, no probe, the
  // PIM down), for as long as the step.
  let answeredAt = -Infinity;
  let failedAt = -Infinity;
  let inFlight: Promise<boolean> | undefined;
  const ask = async () => {
    // A redirect is never followed: a PIM_BASE_URL that redirects every call serves nobody (any 2xx or 4xx answers).
    // A probe that found no free slot in its whole time asked nothing: callers' calls held every connection to the PIM
    // meanwhile. A slow but healthy PIM under load is no reason to turn traffic away: while the breaker is closed and
    // the PIM answered some call within one call's time (PIM_TIMEOUT_MS) past the max age, that counts. A frozen PIM
    // answers none, and the breaker need not open for it: calls whose caller left, or whose budget ran out first, are
    // no fault of the PIM's, and each keeps its slot for its whole PIM_TIMEOUT_MS.
    const queuedOutAnswered = (error: unknown) =>
      isQueuedOut(error) &&
      client.status.breaker === 'closed' &&
      performance.now() - client.status.answeredAt <= maxAgeMs + callTimeoutMs + PROBE_ANSWER_MS;
    // A probe the breaker refused never reached the PIM: no check is held back for it (the next may be the trial).
    let sent = true;
    const answered = await client.probe().then(
      () => true,
      (error: unknown) => (
        (sent = !refusedByBreaker(error)),
        queuedOutAnswered(error) || (isProbeAnswer(error) && !(error instanceof PimError && isRedirect(error.status)))
      ),
    );
    if (answered) answeredAt = performance.now();
    else if (sent) failedAt = performance.now();
    return answered;
  };
  return async () => {
    if (client.status.breaker === 'closed' && performance.now() - answeredAt <= maxAgeMs) return true;
    if (!inFlight && performance.now() - failedAt < Math.min(NOT_ANSWERED_FOR_MS, maxAgeMs)) return false;
    inFlight ??= ask().finally(() => (inFlight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'running'>((resolve) => (timer = setTimeout(resolve, ANSWER_WITHIN_MS, 'running')));
    const outcome = await Promise.race([inFlight, late]).finally(() => clearTimeout(timer));
    const answered = outcome === 'running' ? performance.now() - answeredAt <= maxAgeMs + PROBE_ANSWER_MS : outcome;
    return answered && client.status.breaker === 'closed';
  };
}
