import { createPimClient, type PimClientOptions } from './client.ts';
import { createUpstreamCredentials, type UpstreamCredentialsOptions } from './credential.ts';
import type { StaleServingOptions } from './steps/stale-serving.ts';
import type { ResilienceHooks } from './steps/breaker.ts';
import { createUpstreamFaults, type UpstreamFault } from './steps/upstream-faults.ts';
import type { StateLogger } from './steps/upstream-log.ts';

type Hooked = 'baseUrl' | 'credentialHeaders' | 'telemetry' | 'upstreamFaults' | 'cache' | 'stale' | 'probe';
type CacheSettings = Exclude<PimClientOptions['cache'], false>;

/** The client's settings (config.ts's `pim` group): each step's own, less the hooks that `createUpstream` adds. */
export type PimSettings = Omit<PimClientOptions, Hooked> & {
  cache: Omit<CacheSettings, 'onError' | 'refusedSince'> | false;
  // Always on here: invalidations (POST /cache/invalidate, another instance's) come through it to the cache of results.
  stale: Omit<NonNullable<PimClientOptions['stale']>, 'onError' | 'onInvalidation' | 'onOutcome'>;
  probe: Omit<PimClientOptions['probe'], 'headers'>;
};

/** What the upstream reports to: observability/setup.ts makes these, and the cache of results is told below. */
export interface UpstreamHooks {
  telemetry: NonNullable<PimClientOptions['telemetry']>;
  onRetry: NonNullable<ResilienceHooks['onRetry']>;
  onFault(fault: UpstreamFault): void;
  onOutcome: NonNullable<StaleServingOptions['onOutcome']>;
  /** A Redis store's `onError`. */
  redisFailed(store: 'cache' | 'stale'): (error: Error) => void;
  /** Any invalidation, here or on another instance (read from the shared store). */
  onInvalidation(): void;
}

/**
 * The PIM as the app sees it: which credential each call carries (its own key, else the server's), the step that
 * learns from answers which keys are real, and the client that composes every step of the call (pipeline.ts).
 */
export function createUpstream(
  baseUrl: string,
  { pim, credentials: keys }: { pim: PimSettings; credentials: UpstreamCredentialsOptions },
  hooks: UpstreamHooks,
  logger: StateLogger | undefined,
) {
  const { redisFailed, onRetry, onFault, onOutcome, onInvalidation, telemetry } = hooks;
  const credentials = createUpstreamCredentials(keys);
  // Told which keys the PIM accepts or refuses: the door counts a key as one of its own only while it is real.
  const faults = createUpstreamFaults({ credentials, logger, intervalMs: 10_000, onFault });
  const client = createPimClient({
    ...pim,
    baseUrl,
    credentialHeaders: credentials.names,
    cache: pim.cache && { ...pim.cache, onError: redisFailed('cache'), refusedSince: credentials.refusedSince },
    stale: { ...pim.stale, onError: redisFailed('stale'), onInvalidation, onOutcome },
    telemetry,
    upstreamFaults: faults.layer,
    resilience: { ...pim.resilience, onRetry, logger },
    probe: { ...pim.probe, headers: credentials.headers() },
  });
  return { credentials, client, close: () => (faults.close(), client.close()) };
}
