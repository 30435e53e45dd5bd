import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Counter, Histogram } from 'prom-client';
import { createOperationLabel, describeOperation, errorsOf, type ResultPart } from '../../plugins/operation.ts';

/** The metrics this plugin serves and records into (observability/metrics.ts creates them). */
export interface OperationMetrics {
  /** The registry in Prometheus text format. */
  scrape(): Promise<{ contentType: string; body: string }>;
  operations: Counter<'operation_type' | 'operation_name'>;
  operationDuration: Histogram<'operation_type' | 'operation_name'>;
  errors: Counter<'code'>;
  clientDisconnects: Counter;
}

export interface MetricsPluginOptions {
  metrics: OperationMetrics;
  /** Where Prometheus scrapes; false serves no endpoint. */
  path: string | false;
  /** The only operation names kept as label values (the trusted documents'); absent: the first ones seen. */
  operationNames?: ReadonlySet<string> | undefined;
}

/**
 * Serves the app's registry in Prometheus text format and records every operation: count,
 * duration (until the last deferred part) and the `extensions.code` of each error sent.
 */
export function useMetrics({ metrics, path, operationNames }: MetricsPluginOptions): Plugin {
  const label = createOperationLabel(operationNames);
  // A request counts as one disconnect, whether its client left before the answer or during its stream.
  const gone = new WeakSet<Request>();
  const disconnected = (request: Request) => {
    if (gone.has(request)) return;
    gone.add(request);
    metrics.clientDisconnects.inc();
  };
  const countErrors = (result: ResultPart) => {
    for (const error of errorsOf(result)) metrics.errors.inc({ code: String(error.extensions?.code ?? 'UNKNOWN') });
  };
  return {
    // Synchronous for every other path: a GraphQL request goes on without a promise.
    onRequest({ url, request, endResponse, fetchAPI }) {
      if (path === false || url.pathname !== path || request.method !== 'GET') return;
      return metrics
        .scrape()
        .then(({ contentType, body }) =>
          endResponse(new fetchAPI.Response(body, { headers: { 'content-type': contentType } })),
        );
    },
    onExecute({ args }) {
      const { type, name } = describeOperation(args.document, args.operationName);
      const labels = { operation_type: type, operation_name: label(name) };
      metrics.operations.inc(labels);
      const stop = metrics.operationDuration.startTimer(labels);
      const { request } = args.contextValue as { request: Request };
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) return void stop();
          // Also runs when a client cancels a stream whose first part (and status) it already had.
          return { onEnd: () => void (stop(), request.signal.aborted && disconnected(request)) };
        },
      };
    },
    // The processed result carries the masked errors, i.e. the codes clients actually see.
    onResultProcess({ request, result, setResult }) {
      // Nobody sees the errors of a client that left (one per field in flight): it counts once, as a disconnect.
      if (request.signal.aborted) return disconnected(request);
      if (!isAsyncIterable(result)) {
        for (const single of Array.isArray(result) ? result : [result]) countErrors(single);
        return;
      }
      setResult(mapAsyncIterator(result, (part) => (countErrors(part), part)));
    },
  };
}
