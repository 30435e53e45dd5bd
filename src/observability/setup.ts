import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Layer } from '../pim/rest/types.ts';
import type { PimRequest } from '../pim/rest/endpoints.ts';
import type { CacheOutcome } from '../pim/steps/stale.ts';
import type { UpstreamFault } from '../pim/steps/upstream-faults.ts';
import { throttled } from '../redis.ts';
import type { PimClient } from '../pim/client.ts';
import { createTelemetry } from '../pim/steps/telemetry.ts';
import { useMetrics } from './plugins/metrics.ts';
import { refusalCode } from '../errors.ts';
import { createRefusalLog, requestIdFrom, type RefusedRequest, useRequestLog } from './plugins/request-log.ts';
import { useTracing } from './plugins/tracing.ts';
import { createOperationLabel } from '../plugins/operation.ts';
import { createMetrics, type Metrics, type ResponseCacheFigures } from './metrics.ts';
import { createTracerProvider } from './tracing.ts';

export interface ObservabilityOptions {
  logger?: Logger | undefined;
  /** The OTLP/HTTP URL spans are sent to; absent (and no exporter): no tracing. */
  otlpTracesUrl?: string | undefined;
  /** Replaces the OTLP exporter, for tests. */
  spanExporter?: SpanExporter | undefined;
  /** OTEL_SERVICE_NAME; unset, `service.name` of the resource attributes, else the app's name. */
  serviceName?: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, on every span. */
  resourceAttributes?: Readonly<Record<string, string>> | undefined;
  /** Where Prometheus scrapes; false serves no endpoint (metrics are still kept). */
  metricsPath: string | false;
  /** A port of their own for the metrics (main.ts serves them there); then the main port serves none. */
  metricsPort?: number | undefined;
  /** The only operation names kept as metric labels (the trusted documents'); absent: the first ones seen. */
  operationNames?: ReadonlySet<string> | undefined;
  /** The PIM's base URL, named in the upstream calls' spans (server.address, server.port). */
  pimBaseUrl?: string | undefined;
  /** The client, read when /metrics is scraped: its breaker state and last-known-good weight. */
  upstream?: () => Pick<PimClient, 'status' | 'staleBytes' | 'queued'>;
  /** The cache of serialized results' figures, read when /metrics is scraped; undefined while it is off. */
  responseCache?: () => ResponseCacheFigures | undefined;
}

// What a failing Redis store's warn line says it does instead.
// How long the spans still waiting in the batch may take to leave at shutdown.
const FLUSH_MS = 2_000;

const redisFallbacks = {
  cache: 'Response cache failed; answering from the upstream',
  apq: 'APQ document store failed; answering as a miss',
  stale: 'Stale-answer store failed; answering without it',
};

export interface Observability {
  metrics: Metrics;
  /** The metrics in Prometheus text format, for a listener of their own (METRICS_PORT). */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** Yoga plugins: /metrics, request log and id, operation spans. */
  plugins: Plugin[];
  /** The client's telemetry step (see pim/pipeline.ts): upstream metrics and spans per attempt. */
  telemetry: Layer;
  /** A request the HTTP server refused before Yoga: logged and counted; returns the id its answer echoes. */
  refused(request: RefusedRequest, status: number): string;
  /**
   * A handler the servers run outside Yoga (POST /cache/invalidate, on either port), given the id, the `request
   * completed` line and, for a refusal, the count Yoga's requests and the server's refusals get.
   */
  served(
    handle: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void;
  /** Called when the per-request DataLoader answers a load from its cache. */
  onDedup(request: PimRequest): void;
  /** The hooks of the client's steps, counted: retries, faults, cache and stale outcomes. */
  onRetry(request: PimRequest): void;
  onFault(fault: UpstreamFault): void;
  onOutcome(outcome: CacheOutcome, reason?: string): void;
  /** A Redis store's `onError`: counted, and logged with what the store does instead at most once per 10 s. */
  redisFailed(store: keyof typeof redisFallbacks): (error: Error) => void;
  /** Flushes pending spans. */
  close(): Promise<void>;
}

/** Wires metrics, logs and traces of one app instance; see docs/operations.md, Monitoring. */
export function createObservability({
  logger,
  otlpTracesUrl,
  spanExporter,
  serviceName,
  resourceAttributes,
  metricsPath,
  metricsPort,
  operationNames,
  pimBaseUrl,
  upstream,
  responseCache,
}: ObservabilityOptions): Observability {
  const metrics = createMetrics({
    upstreamStatus: () => upstream?.().status,
    staleBytes: upstream && (() => upstream().staleBytes()),
    queuedCalls: upstream && (() => upstream().queued()),
    responseCache,
  });
  // A collector down, unreachable or refusing: each batch counts, and one warn line per interval says so.
  const unexported = throttled(
    (error: Error | undefined) =>
      logger?.warn({ err: error?.message.slice(0, 256) }, 'Spans could not be sent to the OTLP collector'),
    10_000,
  );
  const provider = createTracerProvider({
    url: otlpTracesUrl,
    exporter: spanExporter,
    serviceName,
    attributes: resourceAttributes,
    onExportFailure: (spans, error) => (metrics.spansUnexported.inc(spans), unexported(error)),
  });
  const tracer = provider?.getTracer('pim-graphql-facade');
  const { line: refusalLine, gone: goneLine } = createRefusalLog(logger);
  // One list of the names seen for metrics and spans: each of its own had spans and metrics name one operation apart.
  const label = createOperationLabel(operationNames);
  return {
    metrics,
    scrape: metrics.scrape,
    plugins: [
      useRequestLog({ logger }),
      useMetrics({ metrics, path: metricsPort === undefined && metricsPath, label }),
      ...(tracer ? [useTracing({ tracer, label })] : []),
    ],
    telemetry: createTelemetry({
      calls: metrics.upstreamCalls,
      duration: metrics.upstreamDuration,
      tracer,
      upstream: pimBaseUrl,
    }),
    refused: (request, status) => (
      metrics.refusals.inc({ status: String(status) }),
      refusalLine(request, status, 0, refusalCode(status))
    ),
    served: (handle) => (req, res) => {
      const started = Date.now();
      const incoming = req.headers['x-request-id'];
      const id = requestIdFrom(typeof incoming === 'string' ? incoming : null);
      res.setHeader('x-request-id', id);
      res.once('close', () => {
        const request = { method: req.method ?? 'POST', path: (req.url ?? '/').split('?')[0]!, id };
        if (!res.writableFinished) return goneLine(request);
        // Its refusals of the request (token, body, method); a 503 there is Redis failing, no load shed.
        const { statusCode: status } = res;
        if (status >= 400 && status < 500) metrics.refusals.inc({ status: String(status) });
        refusalLine(request, status, Date.now() - started);
      });
      handle(req, res);
    },
    onDedup: (request) => metrics.dedupHits.inc({ operation: request.operation }),
    onRetry: (request) => metrics.retries.inc({ operation: request.operation }),
    onFault: (fault) => metrics.upstreamFaults.inc({ fault }),
    onOutcome: (outcome, reason) => {
      metrics.cacheOutcomes.inc({ outcome });
      if (reason) metrics.staleAnswers.inc({ reason });
    },
    // Redis being away fails every command: each failure counts, but one warn line per interval says it.
    redisFailed: (store) => {
      const warn = throttled((error: Error) => logger?.warn({ err: error.message }, redisFallbacks[store]), 10_000);
      return (error) => (metrics.redisFailures.inc({ store }), warn(error));
    },
    // Spans not yet exported get FLUSH_MS at shutdown; a collector that is down or silent costs one warn line.
    close: async () => {
      if (!provider) return;
      const unsent = (reason: string) => logger?.warn({ err: reason }, 'Spans were left unexported at shutdown');
      const flushed = provider.shutdown().then(
        () => true,
        (error: Error) => (unsent(error.message), true),
      );
      if (!(await Promise.race([flushed, sleep(FLUSH_MS, false, { ref: false })]))) {
        unsent(`the collector did not answer within ${FLUSH_MS} ms`);
      }
    },
  };
}
