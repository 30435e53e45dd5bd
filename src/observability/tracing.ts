import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

let globalsSet = false;

export interface TracingOptions {
  /** OTLP/HTTP base URL, e.g. http://collector:4318; spans go to `${endpoint}/v1/traces`. */
  endpoint?: string | undefined;
  /** Replaces the OTLP exporter (tests pass an in-memory one); spans are then exported one by one. */
  exporter?: SpanExporter | undefined;
  serviceName: string;
}

/**
 * Creates this app's tracer provider, or undefined when there is nowhere to send spans.
 * The provider is not registered globally, so two apps in one process keep their own exporters.
 */
export function createTracerProvider({ endpoint, exporter, serviceName }: TracingOptions) {
  if (!exporter && !endpoint) return undefined;
  if (!globalsSet) {
    // Parent/child links across awaits need an async context manager; `traceparent` headers in
    // and out need the W3C propagator. Both are process-wide, so they are set once.
    globalsSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  const processor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint!.replace(/\/+$/, '')}/v1/traces` }));
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [processor],
  });
}
