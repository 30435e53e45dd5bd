import type { PimClient } from '../pim/client.ts';
import { buildRequest, type InputLimits } from '../pim/endpoints.ts';
import { isUpstreamAnswer, PimError } from '../pim/errors.ts';

export interface ReadinessOptions {
  client: PimClient;
  limits: InputLimits;
  /** Headers of the probe call (the configured API key, if any). */
  headers: Record<string, string>;
  /** How recent the upstream's last answer must be. */
  maxAgeMs: number;
}

// A probe slower than this says "not ready" as clearly as a failure does.
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Ready means: the breaker is closed and the upstream itself answered (2xx or 4xx) a probe within
 * `maxAgeMs`. Traffic is no evidence, since the HTTP cache may have answered it; so at most one
 * cheap probe per `maxAgeMs` asks the upstream past the cache. A 404 for its made-up id is an answer too.
 */
export function createReadiness({ client, limits, headers, maxAgeMs }: ReadinessOptions): () => Promise<boolean> {
  const probe = buildRequest('listClassificationGroups', { classificationId: 'readiness-probe', pageSize: 1 }, limits);
  const probeHeaders = { ...headers, 'cache-control': 'no-cache' };
  let answeredAt = -Infinity;
  return async () => {
    if (client.status.breaker !== 'closed') return false;
    if (Date.now() - answeredAt <= maxAgeMs) return true;
    const answered = await client.get(probe, { headers: probeHeaders, deadline: Date.now() + PROBE_TIMEOUT_MS }).then(
      () => true,
      (error: unknown) => error instanceof PimError && isUpstreamAnswer(error.status),
    );
    if (answered) answeredAt = Date.now();
    return answered && client.status.breaker === 'closed';
  };
}
