import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { Counter, Histogram } from 'prom-client';
import { keepBudget } from './budget.ts';
import { PimError } from './errors.ts';
import type { Layer } from './client.ts';
import type { PimRequest } from './endpoints.ts';

export interface TelemetryOptions {
  calls?: Counter<'operation' | 'status'>;
  duration?: Histogram<'operation' | 'status'>;
  retries?: Counter<'operation'>;
  /** Absent: no spans. */
  tracer?: Tracer;
}

/**
 * Measures every attempt that reaches the wire: a count and latency by REST operation and
 * status, retries, and a client span named after the path template, never the path with its ids.
 */
export function createTelemetry({ calls, duration, retries, tracer }: TelemetryOptions): Layer {
  // Retry layers repeat a call with the same request object; every other call builds a new one.
  const attempted = new WeakSet<PimRequest>();
  return (next) => async (request, headers, signal) => {
    if (attempted.has(request)) retries?.inc({ operation: request.operation });
    attempted.add(request);
    const started = performance.now();
    const span = tracer?.startSpan(`GET ${request.template}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'pim.operation': request.operation,
        'http.request.method': 'GET',
        'url.template': request.template,
      },
    });
    let status = '2xx';
    try {
      if (!span) return await next(request, headers, signal);
      // `traceparent` lets a traced PIM put its own spans under this one.
      const traced = { ...headers };
      keepBudget(headers, traced);
      propagation.inject(trace.setSpan(context.active(), span), traced);
      return await next(request, traced, signal);
    } catch (error) {
      status = statusOf(error);
      if (error instanceof PimError && error.status !== undefined)
        span?.setAttribute('http.response.status_code', error.status);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof PimError ? error.code : 'aborted' });
      throw error;
    } finally {
      // A 2xx body is all `send` hands back, so success is labelled by class, not exact status.
      span?.setAttribute('pim.status', status);
      span?.end();
      const labels = { operation: request.operation, status };
      calls?.inc(labels);
      duration?.observe(labels, (performance.now() - started) / 1000);
    }
  };
}

function statusOf(error: unknown): string {
  if (!(error instanceof PimError)) return 'ABORTED';
  return error.status === undefined ? error.code : String(error.status);
}
