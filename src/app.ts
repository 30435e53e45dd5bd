import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createContextFactory, type PimContext } from './context.ts';
import { maskError } from './errors.ts';
import { createObservability } from './observability/setup.ts';
import { createGraphiQLAssets, graphiqlOptions } from './plugins/graphiql.ts';
import { createPimClient } from './pim/client.ts';
import { createUpstreamCredentials, SERVER_KEY_HEADER } from './pim/credential.ts';
import { createUpstreamFaults } from './pim/steps/upstream-faults.ts';
import type { UpstreamStatus } from './pim/rest/types.ts';
import { createInvalidationHandler } from './http/invalidate.ts';
import { ALL } from './pim/cache/invalidations.ts';
import { createReadiness } from './pim/readiness.ts';
import { useHttpCaching } from './plugins/http-caching.ts';
import { useAbuseLimits } from './plugins/limits.ts';
import { createPersistedDocuments } from './plugins/persisted.ts';
import { createResponseCache, type ResponseCache } from './plugins/response-cache.ts';
import { useRefusalMessages } from './plugins/refusal-messages.ts';
import { corsFor, useCorsVary, useSecurity } from './plugins/security.ts';
import { schema } from './schema/index.ts';
import { throttled } from './redis.ts';

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
  /** The cache of serialized results (RESPONSE_CACHE_MAX_MB): its invalidation hook; undefined when off. */
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
  // Each Redis failure is counted; the warn line comes at most once per interval, since Redis being
  // away fails every command. Called only once the app exists, so `observability` is set by then.
  const redisFailed = (store: 'cache' | 'apq' | 'stale', message: string) => {
    const warn = throttled((error: Error) => logger?.warn({ err: error.message }, message), 10_000);
    return (error: Error) => (observability.metrics.redisFailures.inc({ store }), warn(error));
  };
  const persisted = createPersistedDocuments({
    ...config.persistedDocuments,
    apq: config.apq && {
      ...config.apq,
      maxDocumentBytes: config.http.maxBodyBytes,
      onError: redisFailed('apq', 'APQ document store failed; answering as a miss'),
    },
  });
  const observability = createObservability({
    logger,
    otlpEndpoint: config.otlpEndpoint,
    spanExporter: extras.spanExporter,
    serviceName: config.otelServiceName,
    metricsPath: config.metricsPort === undefined ? config.metricsPath : false,
    operationNames: persisted.operationNames,
    // Read at scrape time only, when the client below exists.
    upstreamStatus: () => client.status,
    staleBytes: () => client.staleBytes(),
  });
  // GraphiQL's files are looked up only where GraphiQL is served: production start-up never touches them.
  const graphiqlAssets = config.introspection ? createGraphiQLAssets() : undefined;
  const credentials = createUpstreamCredentials({ forwardHeaders: config.forwardHeaders, apiKey: config.pimApiKey });
  const faults = createUpstreamFaults({
    serverKey: config.pimApiKey === undefined ? undefined : { header: SERVER_KEY_HEADER, value: config.pimApiKey },
    credentialNames: credentials.names,
    logger,
    intervalMs: 10_000,
    onFault: (fault) => observability.metrics.upstreamFaults.inc({ fault }),
  });
  const client = createPimClient({
    baseUrl: config.pimBaseUrl,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxConcurrency: config.maxConcurrency,
    maxConcurrencyPerCredential: config.maxConcurrencyPerCredential,
    credentialHeaders: credentials.names,
    coalesce: config.coalesce,
    cache: config.cache && {
      ...config.cache,
      onError: redisFailed('cache', 'Response cache failed; answering from the upstream'),
    },
    stale: {
      ...config.stale,
      onError: redisFailed('stale', 'Stale-answer store failed; answering without it'),
      // Any invalidation, here or on another instance, ends every cached result; they refill from fresh answers.
      onInvalidation: () => responses?.invalidate(ALL),
      onOutcome: (outcome, reason) => {
        observability.metrics.cacheOutcomes.inc({ outcome });
        if (reason) observability.metrics.staleAnswers.inc({ reason });
      },
    },
    telemetry: observability.telemetry,
    upstreamFaults: faults.layer,
    maxBodyBytes: config.maxUpstreamBodyBytes,
    byteLimits: config.upstreamByteLimits,
    resilience: {
      ...config.resilience,
      onRetry: (request) => observability.metrics.retries.inc({ operation: request.operation }),
      logger,
    },
  });
  const limits = { maxPageSize: config.maxPageSize, maxIdLength: config.maxIdLength };
  const requestContext = createContextFactory({
    client,
    limits,
    credentials,
    budgetMs: config.budgetMs,
    maxUpstreamCalls: config.maxUpstreamCalls,
    maxRepresentations: config.maxRepresentations,
    onDedup: observability.onDedup,
    clientIpHeader: config.clientIpHeader,
  });
  const responses = config.responseCache
    ? createResponseCache({ ...config.responseCache, forwardHeaders: config.forwardHeaders, credentials })
    : undefined;
  const { introspection, csrfPrevention, serviceSdl } = config;
  const securityOptions = { introspection, csrfPrevention, serviceSdl };
  const yoga = createYoga<object, PimContext>({
    schema,
    context: requestContext.context,
    plugins: [
      useSecurity(securityOptions),
      useCorsVary(config.corsOrigins),
      persisted.plugin,
      useAbuseLimits({ ...config.limits, blockSuggestions: !config.introspection }),
      useDeferStream(),
      requestContext.plugin,
      useHttpCaching({ forwardHeaders: config.forwardHeaders, surrogateKeyHeader: config.surrogateKeyHeader }),
      ...observability.plugins,
      // After HTTP caching and every other onExecute hook: a hit stops execution where it is.
      ...(responses ? [responses.plugin] : []),
      ...(graphiqlAssets ? [graphiqlAssets.plugin] : []),
      useRefusalMessages(),
    ],
    maskedErrors: { maskError },
    batching: config.batching ? { limit: 10 } : false,
    graphiql: config.introspection && graphiqlOptions,
    cors: corsFor(config.corsOrigins),
    ...(graphiqlAssets ? { renderGraphiQL: graphiqlAssets.render } : {}),
    landingPage: false,
    // The node:http server (http/server.ts) refuses bodies over HTTP_MAX_BODY_BYTES before Yoga
    // sees them; Yoga's own 25 MB check would pipe every body through one more stream.
    maxRequestBodySize: false,
    logging: logger ?? false,
  });
  const { registry } = observability.metrics;
  return {
    yoga,
    close: async () =>
      void (faults.close(), await Promise.all([client.close(), observability.close(), persisted.close()])),
    ready: createReadiness({ client, limits, headers: credentials.headers(), maxAgeMs: config.readinessMaxAgeMs }),
    upstream: client.status,
    metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    invalidation: config.cacheAdminToken
      ? {
          handle: createInvalidationHandler({ token: config.cacheAdminToken, invalidate: client.invalidate }),
          port: config.metricsPort === undefined ? 'main' : 'metrics',
        }
      : undefined,
    responses,
  };
}
