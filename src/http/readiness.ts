import type { PimClient } from '../pim/client.ts';
import { buildRequest, type InputLimits } from '../pim/endpoints.ts';

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
 * Ready means: the breaker is closed and the upstream answered (2xx or 4xx) within `maxAgeMs`.
 * Without recent traffic one cheap probe call is made; a 404 for its made-up id is an answer too.
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
  const fresh = () =>
    client.status.breaker === 'closed' && Date.now() - (client.status.lastSuccessAt ?? -Infinity) <= maxAgeMs;
  return async () => {
    if (client.status.breaker !== 'closed') return false;
    if (fresh()) return true;
    // no-cache: an answer from the HTTP cache would say nothing about the upstream now.
    await client
      .get(probe(), { ...headers, 'cache-control': 'no-cache' }, AbortSignal.timeout(probeTimeoutMs))
      .catch(() => undefined);
    return fresh();
  };
}
