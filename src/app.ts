import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createContextFactory, type PimContext } from './context.ts';
import { createObservability } from './observability/setup.ts';
import { createPimClient } from './pim/client.ts';
import { createUpstreamCredentials, SERVER_KEY_HEADER } from './pim/credential.ts';
import { createUpstreamFaults } from './pim/steps/upstream-faults.ts';
import type { UpstreamStatus } from './pim/rest/types.ts';
import { createInvalidationHandler } from './http/invalidate.ts';
import { createReadiness } from './pim/readiness.ts';
import { ALL } from './pim/cache/invalidations.ts';
import { createPersistedDocuments } from './plugins/persisted.ts';
import { createResponseCache, type ResponseCache } from './plugins/response-cache.ts';
import { createYogaServer } from './yoga.ts';

export interface App {
  yoga: YogaServerInstance<object, PimContext>;
  /** Releases the upstream connection pool, the cache and APQ Redis clients and the trace exporter. */
  close(): Promise<void>;
  /** True when the upstream answered recently and its breaker is closed (may probe it once). */
  ready(): Promise<boolean>;
  /** Breaker state, read-only. */
  upstream: UpstreamStatus;
  /** The app's metrics in Prometheus text format, for a listener of their own (METRICS_PORT). */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** POST /cache/invalidate, when CACHE_ADMIN_TOKEN is set: on the metrics port if there is one. */
  invalidation: { handle: ReturnType<typeof createInvalidationHandler>; port: 'main' | 'metrics' } | undefined;
  /** The cache of serialized results (RESPONSE_CACHE_MAX_BYTES): its invalidation hook; undefined when off. */
  responses: Pick<ResponseCache, 'invalidate' | 'stats'> | undefined;
}

/** What tests inject in place of the configured infrastructure. */
export interface AppExtras {
  /** Receives the spans instead of the OTLP endpoint. */
  spanExporter?: SpanExporter;
}

/**
 * Builds the GraphQL server for a configuration whose `pimBaseUrl` is set; does not listen.
 * Serve it with http/server.ts, which enforces the request body limit.
 */
export function createApp(config: Config & { pimBaseUrl: string }, logger?: Logger, extras: AppExtras = {}): App {
  const { apq } = config.persisted;
  // APQ errors come with requests only, by when `apqFailed` below is set.
  const persisted = createPersistedDocuments({
    ...config.persisted,
    apq: apq && { ...apq, onError: (e) => apqFailed(e) },
  });
  const { metricsPort, ...observed } = config.observability;
  const observability = createObservability({
    ...observed,
    logger,
    spanExporter: extras.spanExporter,
    metricsPath: metricsPort === undefined && observed.metricsPath,
    operationNames: persisted.operationNames,
    // Read at scrape time only, when the client below exists.
    upstreamStatus: () => client.status,
    staleBytes: () => client.staleBytes(),
  });
  const { redisFailed, onFault, onOutcome, onRetry } = observability;
  const apqFailed = redisFailed('apq', 'APQ document store failed; answering as a miss');
  const credentials = createUpstreamCredentials(config.credentials);
  const { apiKey } = config.credentials;
  const serverKey = apiKey === undefined ? undefined : { header: SERVER_KEY_HEADER, value: apiKey };
  const faults = createUpstreamFaults({
    serverKey,
    credentialNames: credentials.names,
    logger,
    intervalMs: 10_000,
    onFault,
  });
  const { pim } = config;
  const client = createPimClient({
    ...pim,
    baseUrl: config.pimBaseUrl,
    credentialHeaders: credentials.names,
    cache: pim.cache && {
      ...pim.cache,
      onError: redisFailed('cache', 'Response cache failed; answering from the upstream'),
    },
    stale: {
      ...pim.stale,
      onError: redisFailed('stale', 'Stale-answer store failed; answering without it'),
      // Any invalidation, here or on another instance, ends every cached result; they refill from fresh answers.
      onInvalidation: () => responses?.invalidate(ALL),
      onOutcome,
    },
    telemetry: observability.telemetry,
    upstreamFaults: faults.layer,
    resilience: { ...pim.resilience, onRetry, logger },
  });
  const requestContext = createContextFactory({
    ...config.request,
    client,
    credentials,
    onDedup: observability.onDedup,
  });
  const responses = config.responseCache
    ? createResponseCache({ ...config.responseCache, forwardHeaders: config.credentials.forwardHeaders, credentials })
    : undefined;
  const yoga = createYogaServer(
    config,
    { persisted: persisted.plugin, requestContext, observability: observability.plugins, responses: responses?.plugin },
    logger,
  );
  const { registry } = observability.metrics;
  const token = config.cacheAdminToken;
  return {
    yoga,
    close: async () =>
      void (faults.close(), await Promise.all([client.close(), observability.close(), persisted.close()])),
    ready: createReadiness({
      client,
      limits: config.request.limits,
      headers: credentials.headers(),
      maxAgeMs: config.readinessMaxAgeMs,
    }),
    upstream: client.status,
    metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    invalidation: token
      ? {
          handle: createInvalidationHandler({ token, invalidate: client.invalidate }),
          port: metricsPort === undefined ? 'main' : 'metrics',
        }
      : undefined,
    responses,
  };
}
