import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { ServerResponse } from 'node:http';
import type { Counter, Histogram } from 'prom-client';
import { refusedByServer } from '../../http/client-errors.ts';
import { requestSlot } from '../../plugins/request-slot.ts';
import { refusedCode } from '../../plugins/refusal-messages.ts';
import {
  describeOperation,
  errorsOf,
  serializedLater,
  whenSent,
  untilStreamEnds,
  type ResultPart,
} from '../../plugins/operation.ts';

/** The metrics this plugin serves and records into (observability/metrics.ts creates them). */
export interface OperationMetrics {
  /** The registry in Prometheus text format. */
  scrape(): Promise<{ contentType: string; body: string }>;
  operations: Counter<'operation_type' | 'operation_name'>;
  operationDuration: Histogram<'operation_type' | 'operation_name'>;
  errors: Counter<'code'>;
  clientDisconnects: Counter;
  /** Requests refused before they ran, by status (a 408 node:http sent while the body was read is one). */
  refusals: Counter<'status'>;
}

export interface MetricsPluginOptions {
  metrics: OperationMetrics;
  /** Where Prometheus scrapes; false serves no endpoint. */
  path: string | false;
  /** An operation name's label value (createOperationLabel): bounded, and the one its span's name carries. */
  label: (name: string) => string;
}

/**
 * Serves the app's registry in Prometheus text format and records every operation: count,
 * duration (until the last deferred part) and the `extensions.code` of each error sent.
 */
export function useMetrics({ metrics, path, label }: MetricsPluginOptions): Plugin {
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
  // A whole result waits for its response: serialized, it may have been refused (plugins/sent-bytes.ts), and
  // plugins/refusal-messages.ts may give its one error the code of its status (Yoga's 405 and 413 say BAD_REQUEST).
  // One a multipart or event-stream body serializes as it is read, after its response, counts then (`late`).
  // On the request, not in a WeakMap, whose entry per request every garbage collection traces (request-slot.ts).
  const results = requestSlot<{ parts: ResultPart[]; serialized: boolean; late: boolean } | undefined>(
    'metrics result',
  );
  return {
    // Synchronous for every other path: a GraphQL request goes on without a promise.
    onRequest({ url, request, endResponse, fetchAPI }) {
      // HEAD as on METRICS_PORT's listener (node:http sends no body for it).
      if (path === false || url.pathname !== path || (request.method !== 'GET' && request.method !== 'HEAD')) return;
      return metrics
        .scrape()
        .then(({ contentType, body }) =>
          endResponse(new fetchAPI.Response(body, { headers: { 'content-type': contentType } })),
        );
    },
    onExecute({ args }) {
      const { type, name, named } = describeOperation(args.document, args.operationName);
      // An unnamed operation is `anonymous`, trusted documents or not, and takes none of the names seen.
      const labels = { operation_type: type, operation_name: named ? label(name) : 'anonymous' };
      metrics.operations.inc(labels);
      // Timed here rather than with prom-client's startTimer, which allocates a timer, an hrtime pair and a label copy.
      const started = performance.now();
      const stop = () => metrics.operationDuration.observe(labels, (performance.now() - started) / 1000);
      const { request } = args.contextValue as { request: Request };
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) return void stop();
          // Also runs when a client cancels a stream whose first part (and status) it already had, or leaves before it.
          return {
            onEnd: untilStreamEnds(request, () => void (stop(), request.signal.aborted && disconnected(request))),
          };
        },
      };
    },
    // The processed result carries the masked errors, i.e. the codes clients actually see.
    onResultProcess({ request, result, setResult, serverContext }) {
      // node:http refused it itself (408, its body too slow): its client did not leave; it counts as a refusal.
      const refused = refusedByServer(serverContext);
      if (refused !== undefined) return void metrics.refusals.inc({ status: String(refused) });
      // Nobody sees the errors of a client that left (one per field in flight): it counts once, as a disconnect.
      if (request.signal.aborted) return disconnected(request);
      if (!isAsyncIterable(result)) {
        const whole = { parts: Array.isArray(result) ? result : [result], serialized: false, late: false };
        for (const part of whole.parts) {
          whenSent(part, (sent) => void ((whole.serialized = true), whole.late && countErrors(sent)));
        }
        results.set(request, whole);
        return;
      }
      // A stream's part counts once serialized: plugins/sent-bytes.ts may then have sent a refusal in its place.
      setResult(mapAsyncIterator(result, (part) => whenSent(part, (sent) => countErrors(sent as ResultPart))));
    },
    onResponse({ request, response, serverContext }) {
      const whole = results.get(request);
      if (whole) results.set(request, undefined);
      const all = whole?.parts;
      const parts = all?.some((part) => errorsOf(part).length > 0) ? all : undefined;
      if (request.signal.aborted) return;
      // A refusal rewritten to its status's code, or one answered without a result (Yoga's 404 and 406, a 415).
      const code = refusedCode(response, parts !== undefined);
      if (code !== undefined) metrics.errors.inc({ code });
      // Not serialized yet: what it is sent as (maybe a refusal, plugins/sent-bytes.ts) is known only then.
      else if (whole && !whole.serialized && serializedLater(response)) whole.late = true;
      else parts?.forEach(countErrors);
      // An answer can still lose its client while it is written out (a large one it stops reading).
      const res = (serverContext as { res?: ServerResponse } | undefined)?.res;
      res?.once('close', () => void (res.writableFinished || disconnected(request)));
    },
  };
}
