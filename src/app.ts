import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createContextFactory } from './context.ts';
import { createInvalidationHandler } from './http/invalidate.ts';
import { createObservability } from './observability/setup.ts';
import { ALL } from './pim/cache/invalidations.ts';
import { createReadiness } from './pim/readiness.ts';
import { createUpstream } from './pim/upstream.ts';
import { createPersistedDocuments } from './plugins/persisted.ts';
import { createResponseCache } from './plugins/response-cache.ts';
import { corsHeadersOf } from './plugins/security.ts';
import { createYogaServer, yogaPaths } from './yoga.ts';

/** What tests inject in place of the configured infrastructure: spans go to `spanExporter`, not OTLP. */
export type AppExtras = { spanExporter?: SpanExporter };
export type App = ReturnType<typeof createApp>;

/** Builds the GraphQL server for a configuration whose `pimBaseUrl` is set; serve it with http/server.ts. */
export function createApp(config: Config & { pimBaseUrl: string }, logger?: Logger, { spanExporter }: AppExtras = {}) {
  const { persisted: documents } = config;
  // APQ errors come with requests only, by when `apqFailed` below is set.
  const apq = documents.apq && { ...documents.apq, onError: (error: Error) => apqFailed(error) };
  const persisted = createPersistedDocuments({ ...documents, apq });
  const observability = createObservability({
    ...config.observability,
    logger,
    spanExporter,
    operationNames: persisted.operationNames,
    pimBaseUrl: config.pimBaseUrl,
    // Read at scrape time only, once the client and the cache of results below exist.
    upstream: () => client,
    responseCache: () => responses?.stats(),
  });
  const apqFailed = observability.redisFailed('apq');
  // Any invalidation, here or on another instance, ends every cached result; they refill from fresh answers.
  const onInvalidation = () => responses?.invalidate(ALL);
  const upstream = createUpstream(config.pimBaseUrl, config, { ...observability, onInvalidation }, logger);
  const { client, credentials } = upstream;
  const { onDedup } = observability;
  const requestContext = createContextFactory({ ...config.request, client, credentials, onDedup });
  const cache = config.responseCache && { ...config.responseCache, credentials, partition: client.partition };
  const responses = cache ? createResponseCache({ ...cache, bytes: requestContext.bytes }) : undefined;
  const plugins = { persisted: persisted.plugin, observability: observability.plugins, responses: responses?.plugin };
  const { cacheAdminToken: token, request } = config;
  const purge = token && { token, invalidate: client.invalidate, maxIdLength: request.limits.maxIdLength };
  const port = config.observability.metricsPort === undefined ? ('main' as const) : ('metrics' as const);
  // What the server serves (as `ServedApp` in http/server.ts says), and what main.ts and tests read besides.
  return {
    yoga: createYogaServer(config, { ...plugins, requestContext }, logger),
    paths: yogaPaths(config),
    // The upstream pool, the Redis clients of the caches and APQ, the trace exporter: one failing stops no other.
    close: async () => {
      const closed = await Promise.allSettled([upstream.close(), observability.close(), persisted.close()]);
      for (const { reason } of closed.filter((outcome) => outcome.status === 'rejected')) {
        logger?.warn({ err: String(reason) }, 'A dependency did not close cleanly');
      }
    },
    credentialHeaders: credentials.names,
    credentialOf: credentials.doorShare,
    corsHeaders: corsHeadersOf(config.corsOrigins),
    refused: observability.refused,
    ready: createReadiness({ ...config.readiness, callTimeoutMs: config.pim.requestTimeoutMs, client }),
    stopWaiting: client.closeQueue,
    /** Breaker state, read-only. */
    upstream: client.status,
    /** The app's metrics in Prometheus text format, for a listener of their own (METRICS_PORT). */
    metrics: observability.scrape,
    invalidation: purge ? { handle: observability.served(createInvalidationHandler(purge)), port } : undefined,
    /** The cache of serialized results (RESPONSE_CACHE_MAX_BYTES): its invalidation hook; undefined when off. */
    responses,
  };
}
