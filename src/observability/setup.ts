import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Layer } from '../pim/rest/types.ts';
import type { PimRequest } from '../pim/rest/endpoints.ts';
import type { CacheOutcome } from '../pim/steps/stale.ts';
import type { UpstreamFault } from '../pim/steps/upstream-faults.ts';
import { throttled } from '../redis.ts';
import type { UpstreamStatus } from '../pim/rest/types.ts';
import { createTelemetry } from '../pim/steps/telemetry.ts';
import { useMetrics } from './plugins/metrics.ts';
import { useRequestLog } from './plugins/request-log.ts';
import { useTracing } from './plugins/tracing.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createTracerProvider } from './tracing.ts';

export interface ObservabilityOptions {
  logger?: Logger | undefined;
  /** OTLP/HTTP endpoint; absent (and no exporter): no tracing. */
  otlpEndpoint?: string | undefined;
  /** Replaces the OTLP exporter, for tests. */
  spanExporter?: SpanExporter | undefined;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
  /** Where Prometheus scrapes; false serves no endpoint (metrics are still kept). */
  metricsPath: string | false;
  /** The only operation names kept as metric labels (the trusted documents'); absent: the first ones seen. */
  operationNames?: ReadonlySet<string> | undefined;
  /** The client's breaker state, read when /metrics is scraped. */
  upstreamStatus?: () => UpstreamStatus | undefined;
  /** The client's last-known-good weight, read when /metrics is scraped. */
  staleBytes?: () => number;
}

export interface Observability {
  metrics: Metrics;
  /** Yoga plugins: /metrics, request log and id, operation spans. */
  plugins: Plugin[];
  /** The client's telemetry step (see pim/pipeline.ts): upstream metrics and spans per attempt. */
  telemetry: Layer;
  /** Called when the per-request DataLoader answers a load from its cache. */
  onDedup(request: PimRequest): void;
  /** The hooks of the client's steps, counted: retries, faults, cache and stale outcomes. */
  onRetry(request: PimRequest): void;
  onFault(fault: UpstreamFault): void;
  onOutcome(outcome: CacheOutcome, reason?: string): void;
  /** A Redis store's `onError`: counted, and logged with `message` at most once per 10 s. */
  redisFailed(store: 'cache' | 'apq' | 'stale', message: string): (error: Error) => void;
  /** Flushes pending spans. */
  close(): Promise<void>;
}

/** Wires metrics, logs and traces of one app instance; see docs/operations.md, Monitoring. */
export function createObservability({
  logger,
  otlpEndpoint,
  spanExporter,
  serviceName,
  metricsPath,
  operationNames,
  upstreamStatus,
  staleBytes,
}: ObservabilityOptions): Observability {
  const metrics = createMetrics({ upstreamStatus, staleBytes });
  const provider = createTracerProvider({ endpoint: otlpEndpoint, exporter: spanExporter, serviceName });
  const tracer = provider?.getTracer('pim-graphql-facade');
  return {
    metrics,
    plugins: [
      useRequestLog({ logger }),
      useMetrics({ metrics, path: metricsPath, operationNames }),
      ...(tracer ? [useTracing({ tracer })] : []),
    ],
    telemetry: createTelemetry({
      calls: metrics.upstreamCalls,
      duration: metrics.upstreamDuration,
      tracer,
    }),
    onDedup: (request) => metrics.dedupHits.inc({ operation: request.operation }),
    onRetry: (request) => metrics.retries.inc({ operation: request.operation }),
    onFault: (fault) => metrics.upstreamFaults.inc({ fault }),
    onOutcome: (outcome, reason) => {
      metrics.cacheOutcomes.inc({ outcome });
      if (reason) metrics.staleAnswers.inc({ reason });
    },
    // Redis being away fails every command: each failure counts, but one warn line per interval says it.
    redisFailed: (store, message) => {
      const warn = throttled((error: Error) => logger?.warn({ err: error.message }, message), 10_000);
      return (error) => (metrics.redisFailures.inc({ store }), warn(error));
    },
    close: async () => void (await provider?.shutdown()),
  };
}
