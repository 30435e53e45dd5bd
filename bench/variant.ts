import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createApp, type App } from '../src/app.ts';
import type { Config } from '../src/config.ts';
import { createContextFactory, type PimContext } from '../src/context.ts';
import { maskError } from '../src/errors.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { createPimClient } from '../src/pim/client.ts';
import { createTelemetry } from '../src/pim/telemetry.ts';
import { useAbuseLimits } from '../src/plugins/limits.ts';
import { useMetrics } from '../src/plugins/metrics.ts';
import { useRequestLog } from '../src/plugins/request-log.ts';
import { corsFor, useSecurity } from '../src/plugins/security.ts';
import { schema } from '../src/schema/index.ts';

/** Features that no setting turns off, so the bench builds an app without them to price them. */
export type BenchFeature = 'metrics' | 'limits' | 'security';

/**
 * The app of `createApp` without some features, for the bill of costs only. It mirrors
 * createApp for a production configuration (no GraphiQL, no tracing); with nothing off it IS createApp.
 */
export function createAppWithout(config: Config & { pimBaseUrl: string }, logger: Logger, off: BenchFeature[]): App {
  if (off.length === 0) return createApp(config, logger);
  const metrics = off.includes('metrics') ? undefined : createMetrics({});
  const client = createPimClient({
    baseUrl: config.pimBaseUrl,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxConcurrency: config.maxConcurrency,
    credentialHeaders: config.forwardHeaders,
    coalesce: config.coalesce,
    cache: config.cache,
    maxBodyBytes: config.maxUpstreamBodyBytes,
    resilience: config.resilience,
    ...(metrics && {
      telemetry: createTelemetry({
        calls: metrics.upstreamCalls,
        duration: metrics.upstreamDuration,
        retries: metrics.retries,
      }),
    }),
  });
  const { introspection, csrfPrevention, serviceSdl } = config;
  const yoga = createYoga<object, PimContext>({
    schema,
    context: createContextFactory({
      client,
      limits: { maxPageSize: config.maxPageSize, maxIdLength: config.maxIdLength },
      forwardHeaders: config.forwardHeaders,
      budgetMs: config.budgetMs,
      maxUpstreamCalls: config.maxUpstreamCalls,
      ...(metrics && { onDedup: (request) => metrics.dedupHits.inc({ operation: request.operation }) }),
    }),
    plugins: [
      ...(off.includes('security') ? [] : [useSecurity({ introspection, csrfPrevention, serviceSdl })]),
      ...(off.includes('limits') ? [] : [useAbuseLimits({ ...config.limits, blockSuggestions: !introspection })]),
      useDeferStream(),
      useRequestLog({ logger }),
      ...(metrics ? [useMetrics({ metrics, path: config.metricsPath })] : []),
    ],
    maskedErrors: { maskError },
    batching: false,
    graphiql: false,
    cors: corsFor(config.corsOrigins),
    landingPage: false,
    maxRequestBodySize: false,
    logging: logger,
  });
  return { yoga, close: () => client.close(), ready: async () => true, upstream: client.status };
}
