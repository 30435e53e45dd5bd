import { STATUS_CODES } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { Counter, Histogram } from 'prom-client';
import { PimError } from '../rest/errors.ts';
import type { CallOptions, Layer } from '../rest/types.ts';

export interface TelemetryOptions {
  calls?: Counter<'operation' | 'status'>;
  duration?: Histogram<'operation' | 'status'>;
  /** Absent: no spans. */
  tracer?: Tracer;
  /** The PIM's base URL: its host and port are the spans' `server.address` and `server.port`. */
  upstream?: string | undefined;
}

/**
 * Measures every attempt that reaches the wire: a count and latency by REST operation and
 * status, and a client span named after the path template, never the path with its ids.
 */
export function createTelemetry({ calls, duration, tracer, upstream }: TelemetryOptions): Layer {
  const server = upstream === undefined ? {} : serverOf(new URL(upstream));
  return (next) => async (request, call) => {
    const started = performance.now();
    const span = tracer?.startSpan(`GET ${request.template}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'pim.operation': request.operation,
        'http.request.method': 'GET',
        'url.template': request.template,
        ...server,
      },
    });
    let status = '2xx';
    // A call that never left the connection queue (its budget spent there, the breaker opened, its caller gone) never
    // reached the PIM; a failure the HTTP cache replayed (a kept 404) has the PIM's status, and counts.
    let unsent = false;
    // The retry step's record of a retry (it counts one the PIM never saw as none), else this attempt's own.
    const attempt: NonNullable<CallOptions['attempt']> = call.attempt ?? {};
    try {
      if (!span) return await next(request, { ...call, attempt });
      // `traceparent` lets a traced PIM put its own spans under this one.
      const traced = { ...call.headers };
      propagation.inject(trace.setSpan(context.active(), span), traced);
      const answer = await next(request, { ...call, headers: traced, attempt });
      // Required by OpenTelemetry's HTTP client conventions whenever a response came, a success too.
      if (answer.status !== undefined) span.setAttribute('http.response.status_code', answer.status);
      return answer;
    } catch (error) {
      status = statusOf(error);
      unsent = attempt.sentAt === undefined && !(error instanceof PimError && error.status !== undefined);
      if (error instanceof PimError && error.status !== undefined)
        span?.setAttribute('http.response.status_code', error.status);
      span?.setAttribute('error.type', status);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof PimError ? error.code : 'aborted' });
      throw error;
    } finally {
      // A 2xx body is all `send` hands back, so success is labelled by class, not exact status.
      span?.setAttribute('pim.status', status);
      span?.end();
      const labels = { operation: request.operation, status };
      attempt.counted = !unsent;
      if (!unsent) {
        calls?.inc(labels);
        // From when it left the connection queue: time spent queued is never blamed on the upstream.
        duration?.observe(labels, (performance.now() - (attempt.sentAt ?? started)) / 1000);
      }
    }
  };
}

function statusOf(error: unknown): string {
  if (!(error instanceof PimError)) return 'ABORTED';
  const { status } = error;
  if (status === undefined) return error.code;
  // A label value the PIM (or a proxy before it) chooses: one HTTP does not register counts by its class, so the
  // series stay bounded by the registry's, not the 900 three-digit numbers.
  return STATUS_CODES[status] === undefined ? `${Math.floor(status / 100)}xx` : String(status);
}

// OpenTelemetry's HTTP client attributes for the PIM: its host (no brackets around an IPv6 one) and port.
function serverOf(url: URL) {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { 'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port };
}
