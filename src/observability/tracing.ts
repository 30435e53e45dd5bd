import { context, propagation, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, getNumberFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

let globalsSet = false;

export interface TracingOptions {
  /** The OTLP/HTTP URL spans are sent to, e.g. http://collector:4318/v1/traces. */
  url?: string | undefined;
  /** Replaces the OTLP exporter (tests pass an in-memory one); spans are then exported one by one. */
  exporter?: SpanExporter | undefined;
  /** OTEL_SERVICE_NAME; unset, `service.name` of `attributes`, else the app's name. */
  serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES (`k8s.pod.name`, `deployment.environment`, …), on every span with the detected ones. */
  attributes?: Readonly<Record<string, string>> | undefined;
  /**
   * Told of each batch the exporter could not send, and of each span dropped for want of room while it is slow (the
   * SDK tells only OTel's diagnostic logger, which is unset).
   */
  onExportFailure?: ((spans: number, error: Error | undefined) => void) | undefined;
}

const DEFAULT_SERVICE_NAME = 'pim-graphql-facade';

/**
 * Creates this app's tracer provider, or undefined when there is nowhere to send spans.
 * The provider is not registered globally, so two apps in one process keep their own exporters.
 */
export function createTracerProvider({ url, exporter, serviceName, attributes, onExportFailure }: TracingOptions) {
  if (!exporter && !url) return undefined;
  if (!globalsSet) {
    // Parent/child links across awaits need an async context manager; `traceparent` headers in
    // and out need the W3C propagator. Both are process-wide, so they are set once.
    globalsSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  const queue = boundedQueue(getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048, onExportFailure);
  const sink = reporting(exporter ?? new OTLPTraceExporter({ url }), onExportFailure, queue.handed);
  const processor = exporter
    ? new SimpleSpanProcessor(sink)
    : queue.around(new BatchSpanProcessor(sink, { maxQueueSize: queue.max }));
  // The SDK's own, then the host, process and a per-process instance id (replicas told apart), then the operator's.
  const detected = detectResources({ detectors: [hostDetector, processDetector, serviceInstanceIdDetector] });
  const name = serviceName ?? attributes?.[ATTR_SERVICE_NAME] ?? DEFAULT_SERVICE_NAME;
  return new BasicTracerProvider({
    resource: defaultResource()
      .merge(detected)
      .merge(resourceFromAttributes({ ...attributes, [ATTR_SERVICE_NAME]: name })),
    spanProcessors: [processor],
  });
}

/** `exporter`, telling `handed` of each batch it is given and `onFailure` of each it could not send. */
function reporting(
  exporter: SpanExporter,
  onFailure: TracingOptions['onExportFailure'],
  handed: (spans: number) => void,
): SpanExporter {
  return {
    export(spans, done) {
      handed(spans.length);
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) onFailure?.(spans.length, result.error);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * The batch processor's bound (`max` spans not yet handed to the exporter), kept here: while the collector is slow the
 * SDK drops every span past it and tells only its diagnostic logger. A span past it is dropped here first, and told.
 */
function boundedQueue(max: number, onDropped: TracingOptions['onExportFailure']) {
  let queued = 0;
  const full = new Error(`The span queue is full (${max} spans not yet sent)`);
  return {
    max,
    handed: (spans: number) => void (queued = Math.max(0, queued - spans)),
    around: (processor: SpanProcessor): SpanProcessor => ({
      onStart: (span, parent) => processor.onStart(span, parent),
      onEnd(span) {
        // An unsampled span is not queued (the processor skips it).
        if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) {
          if (queued >= max) return onDropped?.(1, full);
          queued++;
        }
        processor.onEnd(span);
      },
      forceFlush: () => processor.forceFlush(),
      shutdown: () => processor.shutdown(),
    }),
  };
}
