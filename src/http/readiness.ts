import type { PimClient } from '../pim/client.ts';
import { buildRequest, type InputLimits } from '../pim/endpoints.ts';
import { PimError } from '../pim/errors.ts';

export interface ReadinessOptions {
  client: PimClient;
  limits: InputLimits;
  /** Headers of the probe call (the configured API key, if any). */
  headers?: Record<string, string>;
  /** How recent the upstream's last answer must be. @default 30000 */
  maxAgeMs?: number;
  /** Deadline of a probe call. @default 2000 */
  probeTimeoutMs?: number;
}

/**
 * Ready means: the breaker is closed and the upstream itself answered (2xx or 4xx) a probe within
 * `maxAgeMs`. Traffic is no evidence, since the HTTP cache may have answered it; so at most one
 * cheap probe per `maxAgeMs` asks the upstream past the cache. A 404 for its made-up id is an answer too.
 */
export function createReadiness({
  client,
  limits,
  headers = {},
  maxAgeMs = 30_000,
  probeTimeoutMs = 2_000,
}: ReadinessOptions): () => Promise<boolean> {
  // Built anew for each probe: telemetry counts a request object it has seen before as a retry.
  const probe = () =>
    buildRequest('listClassificationGroups', { classificationId: 'readiness-probe', pageSize: 1 }, limits);
  let answeredAt = -Infinity;
  return async () => {
    if (client.status.breaker !== 'closed') return false;
    if (Date.now() - answeredAt <= maxAgeMs) return true;
    const answered = await client
      .get(probe(), { ...headers, 'cache-control': 'no-cache' }, AbortSignal.timeout(probeTimeoutMs))
      .then(
        () => true,
        (error: unknown) => error instanceof PimError && error.status! >= 400 && error.status! < 500,
      );
    if (answered) answeredAt = Date.now();
    return answered && client.status.breaker === 'closed';
  };
}
